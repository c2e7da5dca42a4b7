import type { WindowFlow } from "@tide/db";
import { describe, expect, it } from "vitest";
import {
  buildReport,
  caughtUp,
  MAX_WINDOW_MS,
  planWindowEnd,
  readingOf,
  SETTLE_MS,
  type ProxyAtClose,
} from "./change-report.plan";
import type { HostTraffic } from "../telemetry/proxy-traffic.plan";

const t0 = new Date("2026-11-28T10:00:00.000Z");
const at = (s: number) => new Date(t0.getTime() + s * 1000);
const bind = { address: "10.77.0.1", prefixBits: 32, proto: "tcp" as const, portStart: 8080, portEnd: 8080 };

const vip = (address: string, port: number, sc: number, alt: number, lr: number) => ({
  address,
  port,
  proto: "tcp" as const,
  counters: {
    forwarded_to_alternate: 0,
    accepted_second_chance: sc,
    accepted_alternate_hash: alt,
    accepted_last_resort: lr,
    accepted_established: 0,
    accepted_syn: 0,
  },
  rates: null,
});
const traffic = (readAt: Date, vips: ReturnType<typeof vip>[] | null): HostTraffic => ({
  at: readAt.toISOString(),
  readAt: readAt.toISOString(),
  counters: null,
  rates: { newConnections: null, forwardedToAlternate: null, acceptedEstablished: null },
  vips,
  established: null,
  history: [],
});

describe("readingOf", () => {
  it("sums the counters of the pool's VIPs only", () => {
    const r = readingOf(
      traffic(t0, [vip("10.77.0.1", 8080, 5, 2, 1), vip("10.77.0.1", 8081, 100, 100, 100)]),
      [bind],
    );
    expect(r).toEqual({
      readAt: t0.toISOString(),
      packets: { secondChance: 5, alternateHash: 2, lastResort: 1 },
    });
  });
  it("is null without per-VIP counters", () => {
    expect(readingOf(traffic(t0, null), [bind])).toBeNull();
    expect(readingOf(null, [bind])).toBeNull();
  });
});

describe("planWindowEnd", () => {
  const d = (servedAt: Date | null) => ({ directorId: "dir_1", hostname: "d1", servedAt });
  it("stays open until every director serves the version, then SETTLE_MS", () => {
    const directors = [d(at(2)), d(null)];
    expect(planWindowEnd({ openedAt: t0, now: at(60), replacedAt: null, directors })).toEqual({ end: false });
    const served = [d(at(2)), d(at(5))];
    expect(
      planWindowEnd({ openedAt: t0, now: at(5 + SETTLE_MS / 1000 - 1), replacedAt: null, directors: served }),
    ).toEqual({ end: false });
    const end = planWindowEnd({ openedAt: t0, now: at(40), replacedAt: null, directors: served });
    expect(end).toMatchObject({ end: true, at: at(5 + SETTLE_MS / 1000) });
    expect(end.end && end.why).toContain("served by 2/2 directors");
  });
  it("ends at the newer version's time when one replaced it", () => {
    const end = planWindowEnd({
      openedAt: t0,
      now: at(3),
      replacedAt: { at: at(2), version: 9 },
      directors: [d(null)],
    });
    expect(end).toEqual({ end: true, at: at(2), why: "v9 replaced it" });
  });
  it("ends after the longest window and names the directors that did not serve it", () => {
    const end = planWindowEnd({
      openedAt: t0,
      now: at(MAX_WINDOW_MS / 1000),
      replacedAt: null,
      directors: [d(at(1)), { directorId: "dir_2", hostname: "slow-director", servedAt: null }],
    });
    expect(end).toMatchObject({ end: true, at: at(MAX_WINDOW_MS / 1000) });
    expect(end.end && end.why).toContain("slow-director");
  });
  it("measures a pool no director serves for SETTLE_MS", () => {
    expect(
      planWindowEnd({ openedAt: t0, now: at(SETTLE_MS / 1000), replacedAt: null, directors: [] }),
    ).toMatchObject({ end: true, at: at(SETTLE_MS / 1000) });
  });
});

const flow = (
  hostname: string,
  clientPort: number,
  kinds: Partial<Record<"sc" | "alt" | "lr", Date>>,
): WindowFlow => ({
  hostname,
  clientAddress: "10.77.9.2",
  clientPort,
  address: "10.77.0.1",
  port: 8080,
  proto: "tcp",
  secondChancePackets: kinds.sc ? 3 : 0,
  secondChanceAt: kinds.sc ?? null,
  alternateHashPackets: kinds.alt ? 2 : 0,
  alternateHashAt: kinds.alt ?? null,
  lastResortPackets: kinds.lr ? 1 : 0,
  lastResortAt: kinds.lr ?? null,
});
const proxyAt = (
  hostname: string,
  readAt: Date | null,
  p = [10, 4, 0],
  flowsReadAt: Date | null = at(31),
): ProxyAtClose => ({
  proxyId: `prx_${hostname}`,
  hostname,
  reading: readAt
    ? {
        readAt: readAt.toISOString(),
        packets: { secondChance: p[0]!, alternateHash: p[1]!, lastResort: p[2]! },
      }
    : null,
  flowsReadAt,
  flowsTruncatedAt: null,
});
const base = { secondChance: 1, alternateHash: 1, lastResort: 0 };

describe("buildReport", () => {
  const input = {
    openedAt: t0,
    closedAt: at(30),
    why: "served by 1/1 director, then 20 s",
    baseline: {
      p1: { readAt: t0.toISOString(), packets: base },
      p2: { readAt: t0.toISOString(), packets: base },
    },
    directors: [{ directorId: "dir_1", hostname: "d1", servedAt: at(4) }],
    binds: [bind],
  };
  it("says 0 broken when every proxy reported and no flow was reset, and names the alternate flows", () => {
    const r = buildReport({
      ...input,
      proxies: [proxyAt("p1", at(31)), proxyAt("p2", at(31))],
      flows: [flow("p1", 40000, { sc: at(5), alt: at(5) }), flow("p2", 40001, { sc: at(6) })],
    });
    expect(r.verdict).toBe("none_broken");
    expect(r.broken).toBe(0);
    expect(r.flows).toEqual({ secondChance: 2, alternateHash: 1, lastResort: 0 });
    expect(r.listed.alternateHash.map((f) => `${f.hostname} ${f.clientPort}`)).toEqual(["p1 40000"]);
    expect(r.proxies[0]!.packets).toEqual({ secondChance: 9, alternateHash: 3, lastResort: 0 });
  });
  it("counts reset flows, not packets, and only on the pool's VIPs", () => {
    const other = { ...flow("p1", 40009, { lr: at(8) }), port: 9999 };
    const r = buildReport({
      ...input,
      proxies: [proxyAt("p1", at(31), [1, 1, 40]), proxyAt("p2", at(31))],
      flows: [flow("p1", 40000, { lr: at(7) }), flow("p1", 40002, { lr: at(8) }), other],
    });
    expect(r).toMatchObject({ verdict: "broken", broken: 2 });
    expect(r.proxies[0]!.packets!.lastResort).toBe(40);
  });
  it("does not claim 0 when a proxy's readings do not cover the window", () => {
    const r = buildReport({ ...input, proxies: [proxyAt("p1", at(31)), proxyAt("p2", at(20))], flows: [] });
    expect(r).toMatchObject({ verdict: "unknown", broken: null });
    expect(r.proxies[1]!.reason).toContain("no counters reading after the window");
    const old = buildReport({
      ...input,
      proxies: [proxyAt("p1", at(31)), proxyAt("p2", at(31), undefined, null)],
      flows: [],
    });
    expect(old.proxies[1]!.reason).toContain("does not report flows");
    expect(old.verdict).toBe("unknown");
  });
  it("treats counters that went backwards as a restart, not a negative count", () => {
    const r = buildReport({
      ...input,
      proxies: [proxyAt("p1", at(31), [0, 0, 0]), proxyAt("p2", at(31))],
      flows: [],
    });
    expect(r.proxies[0]).toMatchObject({ packets: null, reported: false });
    expect(r.verdict).toBe("unknown");
  });
  it("makes 0 from a capped reading unknown, since a reset flow may be missing", () => {
    const capped = { ...proxyAt("p1", at(31)), flowsTruncatedAt: at(10) };
    const r = buildReport({ ...input, proxies: [capped, proxyAt("p2", at(31))], flows: [] });
    expect(r).toMatchObject({ atLeast: true, verdict: "unknown", broken: null });
  });
});

describe("caughtUp", () => {
  it("waits for both the counters and the flows of every proxy to pass the end", () => {
    expect(caughtUp([proxyAt("p1", at(31))], at(30))).toBe(true);
    expect(caughtUp([proxyAt("p1", at(29))], at(30))).toBe(false);
    expect(caughtUp([proxyAt("p1", at(31), undefined, at(29))], at(30))).toBe(false);
  });
});
