import { describe, expect, it } from "vitest";
import { bucketQuantile, groupConnectLatency } from "./connect-groups";

interface Netns {
  inode: number;
  name: string | null;
  root: boolean;
}
const root: Netns = { inode: 4026531840, name: null, root: true };
const web: Netns = { inode: 4026532301, name: "web", root: false };

/** One process's window: `fast` calls in 64-128 µs, `slow` calls in 1-2 ms. */
function proc(
  pid: number,
  comm: string,
  fast: number,
  slow: number,
  extra: { eaddr?: number; netns?: Netns } = {},
) {
  const buckets = [
    ...(fast > 0 ? [{ loUs: 64, hiUs: 128, count: fast }] : []),
    ...(slow > 0 ? [{ loUs: 1024, hiUs: 2048, count: slow }] : []),
  ];
  return {
    netns: extra.netns ?? root,
    pid,
    comm,
    calls: fast + slow,
    perSecond: (fast + slow) / 60,
    p50Us: bucketQuantile(buckets, 0.5),
    p99Us: bucketQuantile(buckets, 0.99),
    eaddrnotavail: extra.eaddr ?? 0,
    evenPorts: fast,
    oddPorts: slow,
    buckets,
  };
}

describe("groupConnectLatency", () => {
  it("sums the pids of one command in one namespace, histograms included", () => {
    const { shown, hidden } = groupConnectLatency(
      [proc(12, "curl", 10, 0), proc(11, "curl", 0, 10), proc(13, "curl", 5, 0, { netns: web })],
      { slowFromUs: 512, limit: 10 },
    );
    expect(shown).toHaveLength(2);
    const rootCurl = shown.find((g) => g.netns?.inode === root.inode)!;
    expect(rootCurl.pids).toEqual([11, 12]);
    expect(rootCurl.calls).toBe(20);
    expect(rootCurl.evenPorts).toBe(10);
    expect(rootCurl.oddPorts).toBe(10);
    expect(rootCurl.slowCalls).toBe(10);
    expect(rootCurl.buckets).toEqual([
      { loUs: 64, hiUs: 128, count: 10 },
      { loUs: 1024, hiUs: 2048, count: 10 },
    ]);
    // Half the calls are fast: the median is the top of the fast bucket; p99 is in the slow one.
    expect(rootCurl.p50Us).toBe(128);
    expect(rootCurl.p99Us).toBeCloseTo(1024 + 1024 * 0.98, 6);
    expect(hidden.groups).toBe(0);
  });

  it("does not change the per-process input it was given", () => {
    const a = proc(1, "curl", 3, 0);
    const b = proc(2, "curl", 4, 0);
    groupConnectLatency([a, b], { slowFromUs: 512, limit: 10 });
    expect(a.buckets).toEqual([{ loUs: 64, hiUs: 128, count: 3 }]);
  });

  it("puts failed and slow calls first, then the slower p99, then the busier command", () => {
    const { shown } = groupConnectLatency(
      [
        proc(1, "busy-fast", 5000, 0),
        proc(2, "few-slow", 0, 3),
        proc(3, "exhausted", 10, 0, { eaddr: 40 }),
        proc(4, "quiet-fast", 5, 0),
        proc(5, "also-slow", 0, 3),
      ],
      { slowFromUs: 512, limit: 10 },
    );
    expect(shown.map((g) => g.comm)).toEqual([
      "exhausted",
      "also-slow",
      "few-slow",
      "busy-fast",
      "quiet-fast",
    ]);
  });

  it("keeps `limit` groups and counts what it left out", () => {
    const many = Array.from({ length: 25 }, (_, i) =>
      proc(100 + i, `job-${String(i).padStart(2, "0")}`, 1, i < 2 ? 1 : 0),
    );
    const { shown, hidden } = groupConnectLatency(many, { slowFromUs: 512, limit: 10 });
    expect(shown).toHaveLength(10);
    expect(shown.slice(0, 2).map((g) => g.comm)).toEqual(["job-00", "job-01"]);
    expect(hidden).toEqual({ groups: 15, pids: 15, calls: 15, slowCalls: 0, eaddrnotavail: 0 });
  });
});

describe("bucketQuantile", () => {
  it("is null without events and interpolates inside the bucket that holds the rank", () => {
    expect(bucketQuantile([], 0.5)).toBeNull();
    expect(bucketQuantile([{ loUs: 16, hiUs: 32, count: 4 }], 0.5)).toBe(24);
  });
});
