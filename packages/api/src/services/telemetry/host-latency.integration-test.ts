import { newId, type Observation } from "@tide/contracts";
import { createDb, insertSamples, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { cpus, namespace, probesOn, sample, WEB } from "@tide/diagnostics/fixtures";
import { callerFor, makeUser, restCall, truncateAll } from "../../testing/fixtures";

let db: Db;

beforeAll(() => {
  db = createDb(inject("databaseUrl"), { max: 4 });
});
afterAll(async () => {
  await db.$disconnect();
});
beforeEach(async () => {
  await truncateAll(db);
});

const HOSTNAME = "lb-fra-03";
const PID = 4242;

/** 16-32 µs is bucket 4, 1-2 ms bucket 10, 16-32 ms bucket 14 (log2 µs). */
const FAST = 4;
const SLOW = 10;

/**
 * Two minutes of samples: connect() from `curl` (pid 4242, namespace "web") runs at 10 calls/s in
 * 16-32 µs for the first minute, then at 5 calls/s in 1-2 ms with one EADDRNOTAVAIL a second and
 * only odd source ports (the even half is full). CPU 1's NET_RX has one 20 ms run at t = 100.
 */
function twoMinutes(): Observation[] {
  return Array.from({ length: 121 }, (_, t) => {
    const fastCalls = 10 * Math.min(t, 60);
    const slowCalls = 5 * Math.max(0, t - 60);
    const latencyUs = Array.from({ length: SLOW + 1 }, (_, i) =>
      i === FAST ? fastCalls : i === SLOW ? slowCalls : 0,
    );
    return sample(t, {
      namespaces: [namespace(t), namespace(t, { netns: WEB, pids: [PID] })],
      cpus: cpus(t, 2),
      probes: probesOn(),
      probeResults: {
        connectLatency: [
          {
            netnsInode: WEB.inode,
            pid: PID,
            comm: "curl",
            latencyUs,
            eaddrnotavail: Math.max(0, t - 60),
            evenPorts: fastCalls / 2,
            oddPorts: fastCalls / 2 + slowCalls,
          },
        ],
        netRxSoftirq: [0, 1].map((cpu) => ({
          cpu,
          durationUs: [0, 0, 100 * t, 20 * t, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, cpu === 1 && t >= 100 ? 1 : 0],
          intervalMaxUs: cpu === 1 && t === 100 ? 20_500 : 12,
        })),
      },
    });
  });
}

async function hostWithSamples(): Promise<string> {
  const id = newId("host");
  await db.host.create({ data: { id, name: HOSTNAME, roles: ["proxy"] } });
  await insertSamples(
    db,
    id,
    twoMinutes().map((o) => ({
      id: newId("observation"),
      sampledAt: new Date(o.sampledAt),
      payload: o as never,
    })),
  );
  return id;
}

describe("host latency (connect() per process, NET_RX per CPU)", () => {
  it("summarises only the window's growth of the probes' absolute histograms", async () => {
    const hostId = await hostWithSamples();
    const api = callerFor(db, await makeUser(db, "viewer"));

    const minute = await api.hosts.latency({ hostId: HOSTNAME, seconds: 60 });
    expect(minute.hostId).toBe(hostId);
    expect(minute.seconds).toBe(60);
    expect(minute.probes).toEqual({ connectLatency: true, netRxSoftirq: true });
    expect(minute.connect).toHaveLength(1);
    const curl = minute.connect[0]!;
    expect(curl).toMatchObject({ pid: PID, comm: "curl", calls: 300, eaddrnotavail: 60, evenPorts: 0 });
    expect(curl.netns?.name).toBe("web");
    expect(curl.perSecond).toBeCloseTo(5, 5);
    // Only the slow minute: every call in [1024, 2048) µs.
    expect(curl.buckets).toEqual([{ loUs: 1024, hiUs: 2048, count: 300 }]);
    expect(curl.p50Us).toBeGreaterThanOrEqual(1024);
    expect(curl.p99Us).toBeLessThan(2048);

    const cpu1 = minute.netRx.find((c) => c.cpu === 1)!;
    expect(cpu1.maxUs).toBe(20_500);
    expect(cpu1.runs).toBe(60 * 120 + 1);
    expect(cpu1.buckets.at(-1)).toEqual({ loUs: 16_384, hiUs: 32_768, count: 1 });
    expect(minute.netRx.find((c) => c.cpu === 0)!.maxUs).toBe(12);

    // Two minutes include the fast minute too.
    const both = await api.hosts.latency({ hostId, seconds: 120 });
    const all = both.connect[0]!;
    expect(all.calls).toBe(900);
    expect(all.buckets).toEqual([
      { loUs: 16, hiUs: 32, count: 600 },
      { loUs: 1024, hiUs: 2048, count: 300 },
    ]);
    expect(all.p50Us).toBeLessThan(32);
  });

  it("is empty for a host without samples and refuses unknown hosts", async () => {
    await db.host.create({ data: { id: newId("host"), name: "quiet-01", roles: [] } });
    const api = callerFor(db, await makeUser(db, "viewer"));
    const quiet = await api.hosts.latency({ hostId: "quiet-01", seconds: 60 });
    expect(quiet).toMatchObject({ connect: [], netRx: [], from: null, seconds: 0 });
    await expect(api.hosts.latency({ hostId: "nope-01", seconds: 60 })).rejects.toThrow(/does not exist/);
  });

  it("is served over REST to read tokens, with 4xx for bad windows and no token", async () => {
    await hostWithSamples();
    const admin = await makeUser(db, "admin");
    const { token } = await callerFor(db, admin).tokens.create({ name: "runbook", scopes: ["read"] });
    const get = (path: string, token?: string) => restCall(db, "GET", path, token ? { token } : {});
    const ok = await get(`/hosts/${HOSTNAME}/latency?seconds=30`, token);
    expect(ok.status).toBe(200);
    expect((ok.body!.connect as { calls: number }[])[0]!.calls).toBe(150);
    expect((await get(`/hosts/${HOSTNAME}/latency?seconds=2`, token)).status).toBe(400);
    expect((await get(`/hosts/${HOSTNAME}/latency`)).status).toBe(401);
  });
});
