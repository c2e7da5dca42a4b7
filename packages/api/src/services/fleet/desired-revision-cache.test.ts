import { describe, expect, it } from "vitest";
import { DESIRED_CACHE_TTL_MS, DesiredRevisionCache, type HostDesiredFacts } from "./desired-revision-cache";

/** A cache over a fake database whose revision the test sets, and a LISTEN the test controls. */
function setup(o: { listenFails?: boolean } = {}) {
  let now = 0;
  let revision = 1;
  let reads = 0;
  let notify: (() => void) | null = null;
  let release: (() => void) | null = null;
  const cache = new DesiredRevisionCache(
    async (): Promise<HostDesiredFacts> => {
      reads++;
      const seen = revision;
      if (release === null) return { revision: seen, director: false };
      await new Promise<void>((r) => (release = r)); // a slow read the test finishes
      return { revision: seen, director: false };
    },
    (onChange) => {
      if (o.listenFails) return Promise.reject(new Error("no LISTEN"));
      notify = onChange;
      return Promise.resolve(() => undefined);
    },
    DESIRED_CACHE_TTL_MS,
    () => now,
  );
  const flush = () => new Promise((r) => setImmediate(r));
  return {
    cache,
    flush,
    advance: (ms: number) => (now += ms),
    setRevision: (r: number) => (revision = r),
    reads: () => reads,
    notify: () => notify?.(),
    holdReads: () => (release = () => undefined),
    finishRead: () => release?.(),
  };
}

describe("DesiredRevisionCache", () => {
  it("answers from memory until a desired-state notification, then reads again", async () => {
    const s = setup();
    expect((await s.cache.get("host_1", "lb-1")).revision).toBe(1);
    await s.flush(); // the LISTEN subscription is made
    expect((await s.cache.get("host_1", "lb-1")).revision).toBe(1);
    const before = s.reads();
    expect((await s.cache.get("host_1", "lb-1")).revision).toBe(1);
    expect(s.reads()).toBe(before); // from memory
    s.setRevision(2);
    s.notify();
    expect((await s.cache.get("host_1", "lb-1")).revision).toBe(2);
  });

  it("reads again after the TTL even without a notification", async () => {
    const s = setup();
    await s.cache.get("host_1", "lb-1");
    await s.flush();
    await s.cache.get("host_1", "lb-1");
    s.setRevision(5);
    s.advance(DESIRED_CACHE_TTL_MS - 1);
    expect((await s.cache.get("host_1", "lb-1")).revision).toBe(1);
    s.advance(1);
    expect((await s.cache.get("host_1", "lb-1")).revision).toBe(5);
  });

  it("does not keep a read that a notification overtook", async () => {
    const s = setup();
    await s.cache.get("host_1", "lb-1");
    await s.flush();
    s.holdReads();
    const slow = s.cache.get("host_1", "lb-1"); // reads revision 1 ...
    s.setRevision(2);
    s.notify(); // ... while revision 2 is committed and announced
    s.finishRead();
    expect((await slow).revision).toBe(1);
    expect(s.cache.size).toBe(0);
  });

  it("caches nothing while it cannot listen", async () => {
    const s = setup({ listenFails: true });
    const errors = console.error;
    console.error = () => undefined;
    try {
      await s.cache.get("host_1", "lb-1");
      await s.flush();
      await s.cache.get("host_1", "lb-1");
      expect(s.reads()).toBe(2);
      expect(s.cache.size).toBe(0);
    } finally {
      console.error = errors;
    }
  });
});
