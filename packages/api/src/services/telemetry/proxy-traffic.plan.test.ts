import type { RedirectCounters, RedirectVip, RedirectVipCounters } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { redirectCounters } from "../../testing/redirect-counters";
import {
  ALTERNATE_HASH_KEEP_MS,
  alternateHashRate,
  establishedToBinds,
  fallRate,
  inBind,
  lateAfterMs,
  nextTraffic,
  trafficForBinds,
  trafficLateness,
  type HostTraffic,
  type TrafficSample,
} from "./proxy-traffic.plan";

const at = (s: number) => new Date(Date.parse("2026-11-23T18:00:00.000Z") + s * 1000).toISOString();
const sample = (s: number, c: Partial<RedirectCounters>, vip: number | null = null): TrafficSample => ({
  at: at(s),
  redirect: redirectCounters(c),
  established: vip === null ? null : [{ address: "203.0.113.10", port: 443, count: vip }],
  vipEstablished: vip,
});

describe("nextTraffic", () => {
  it("turns tide-redirect's counters into per-second rates over the interval", () => {
    let t = nextTraffic(
      null,
      sample(0, { accepted_syn: 100, forwarded_to_alternate: 10, accepted_established: 5 }),
    );
    expect(t.rates).toMatchObject({
      newConnections: null,
      forwardedToAlternate: null,
      acceptedEstablished: null,
    });
    t = nextTraffic(
      t,
      sample(2, { accepted_syn: 160, forwarded_to_alternate: 10, accepted_established: 45 }),
    );
    expect(t.rates).toEqual({
      newConnections: 30,
      forwardedToAlternate: 0,
      acceptedEstablished: 20,
      // The why counters are absent from these (older tide-redirect): unknown, not 0.
      acceptedSecondChance: null,
      acceptedAlternateHash: null,
    });
  });

  it("gives no rate across a restart of tide-redirect (counters went down), and ignores old samples", () => {
    const t1 = nextTraffic(null, sample(0, { accepted_syn: 500 }));
    const t2 = nextTraffic(t1, sample(1, { accepted_syn: 3 }));
    expect(t2.rates.newConnections).toBeNull();
    expect(nextTraffic(t2, sample(1, { accepted_syn: 900 }))).toBe(t2);
  });

  it("keeps a bounded history of VIP connections and says how fast they fall", () => {
    let t = nextTraffic(null, sample(0, {}, 100));
    for (let s = 1; s <= 100; s++) t = nextTraffic(t, sample(s, {}, Math.max(0, 100 - 5 * s)));
    expect(t.history).toHaveLength(60);
    expect(t.history.at(-1)).toEqual([at(100), 0]);
    let d = nextTraffic(null, sample(0, {}, 100));
    for (let s = 1; s <= 10; s++) d = nextTraffic(d, sample(s, {}, 100 - 5 * s));
    expect(fallRate(d.history)).toBe(5);
    expect(fallRate([[at(0), 3]])).toBeNull();
  });
});

describe("established connections to a pool's VIPs", () => {
  const binds = [
    { address: "203.0.113.10", prefixBits: 32, proto: "tcp" as const, portStart: 443, portEnd: 443 },
    { address: "198.51.100.0/24", prefixBits: 24, proto: "tcp" as const, portStart: 8000, portEnd: 8099 },
    { address: "192.0.2.1", prefixBits: 32, proto: "udp" as const, portStart: 53, portEnd: 53 },
  ];
  it("counts only sockets on a TCP bind's address (or network) and port range", () => {
    expect(
      establishedToBinds(
        [
          { address: "203.0.113.10", port: 443, count: 7 },
          { address: "203.0.113.10", port: 80, count: 100 }, // not a bind port
          { address: "198.51.100.77", port: 8050, count: 3 },
          { address: "198.51.101.77", port: 8050, count: 50 }, // outside the /24
          { address: "10.0.0.5", port: 443, count: 900 }, // the proxy's own address (backend connections)
          { address: "192.0.2.1", port: 53, count: 4 }, // a UDP bind
        ],
        binds,
      ),
    ).toBe(10);
    expect(establishedToBinds(null, binds)).toBeNull();
  });

  it("matches IPv4 networks by prefix and IPv6 exactly", () => {
    expect(inBind("198.51.100.255", binds[1]!)).toBe(true);
    expect(inBind("2001:db8::10", { ...binds[0]!, address: "2001:DB8::10", prefixBits: 128 })).toBe(true);
    expect(inBind("203.0.113.10", { ...binds[0]!, address: "2001:db8::10", prefixBits: 128 })).toBe(false);
  });
});

const vipCounters = (c: Partial<RedirectVipCounters> = {}): RedirectVipCounters => ({
  forwarded_to_alternate: 0,
  accepted_second_chance: 0,
  accepted_alternate_hash: 0,
  accepted_last_resort: 0,
  accepted_established: 0,
  accepted_syn: 0,
  ...c,
});
const vip = (address: string, port: number, c: Partial<RedirectVipCounters>): RedirectVip => ({
  address,
  port,
  proto: "tcp",
  counters: vipCounters(c),
});
/** A reading at second `s` (read then too), of a host expected every second. */
const reading = (s: number, vips: RedirectVip[], c: Partial<RedirectCounters> = {}): TrafficSample => ({
  at: at(s),
  readAt: at(s),
  expectedIntervalMs: 1000,
  redirect: redirectCounters(c),
  vips,
  established: null,
  vipEstablished: null,
});

/** Two pools one host is a proxy of: www on 203.0.113.10:443, api on 198.51.100.0/24 ports 8000-8099. */
const www = [
  { address: "203.0.113.10", prefixBits: 32, proto: "tcp" as const, portStart: 443, portEnd: 443 },
];
const api = [
  { address: "198.51.100.0/24", prefixBits: 24, proto: "tcp" as const, portStart: 8000, portEnd: 8099 },
];

describe("figures per pool, from the VIP counters", () => {
  it("gives a proxy in two pools each pool's own figures; second chance = forwarded + accepted as a hop", () => {
    let t = nextTraffic(null, reading(0, [vip("203.0.113.10", 443, { accepted_established: 1000 })]));
    t = nextTraffic(
      t,
      reading(2, [
        vip("203.0.113.10", 443, { accepted_established: 1900, accepted_syn: 20 }),
        // First seen now (its entry is made on its first packet): counted from 0.
        vip("198.51.100.7", 8080, {
          forwarded_to_alternate: 40,
          accepted_second_chance: 10,
          accepted_alternate_hash: 4,
          accepted_established: 10,
          accepted_last_resort: 2,
        }),
        vip("198.51.100.7", 9000, { forwarded_to_alternate: 500 }), // not a bind port of api
      ]),
    );
    expect(trafficForBinds(t, www)).toEqual({
      scope: "pool",
      newConnectionsPerS: 10,
      forwardedToAlternatePerS: 0,
      acceptedEstablishedPerS: 450, // every packet of its local flows: not a second chance
      acceptedSecondChancePerS: 0,
      acceptedAlternateHashPerS: 0,
      acceptedLastResortPerS: 0,
      secondChancePerS: 0,
    });
    expect(trafficForBinds(t, api)).toEqual({
      scope: "pool",
      newConnectionsPerS: 0,
      forwardedToAlternatePerS: 20,
      acceptedEstablishedPerS: 5,
      acceptedSecondChancePerS: 5,
      acceptedAlternateHashPerS: 2,
      acceptedLastResortPerS: 1,
      secondChancePerS: 25,
    });
    // A pool whose VIPs saw no packet: zeros (known), not unknown.
    expect(trafficForBinds(t, [{ ...www[0]!, address: "192.0.2.1" }]).secondChancePerS).toBe(0);
  });

  it("has no figures before a second reading, and the host's totals without VIP counters", () => {
    const first = nextTraffic(null, reading(0, [vip("203.0.113.10", 443, { accepted_syn: 5 })]));
    expect(trafficForBinds(first, www)).toMatchObject({
      scope: "pool",
      newConnectionsPerS: null,
      secondChancePerS: null,
    });
    const old = (s: number, c: Partial<RedirectCounters>): TrafficSample => ({
      ...reading(s, []),
      vips: null,
      redirect: redirectCounters(c),
    });
    let t = nextTraffic(null, old(0, { forwarded_to_alternate: 10, accepted_established: 100 }));
    t = nextTraffic(t, old(1, { forwarded_to_alternate: 30, accepted_established: 600 }));
    // An older tide-redirect (no accepted_second_chance): the second chance is unknown, not the established rate.
    expect(trafficForBinds(t, www)).toMatchObject({
      scope: "host",
      forwardedToAlternatePerS: 20,
      secondChancePerS: null,
    });
    t = nextTraffic(null, old(0, { forwarded_to_alternate: 10, accepted_second_chance: 0 }));
    t = nextTraffic(t, old(1, { forwarded_to_alternate: 30, accepted_second_chance: 7 }));
    expect(trafficForBinds(t, www)).toMatchObject({ scope: "host", secondChancePerS: 27 });
  });
});

describe("late readings", () => {
  const v = (n: number) => [
    vip("203.0.113.10", 443, { accepted_established: n, forwarded_to_alternate: n / 10 }),
  ];

  it("never shows a zero then a double when a delivery repeats a reading", () => {
    let t = nextTraffic(null, reading(0, v(0)));
    t = nextTraffic(t, reading(1, v(500)));
    expect(trafficForBinds(t, www).acceptedEstablishedPerS).toBe(500);
    // The next batch of the same delivery: a newer sample, the same reading (read at second 1).
    const again = nextTraffic(t, { ...reading(1.2, v(500)), readAt: at(1) });
    expect(again.at).toBe(at(1.2));
    expect(trafficForBinds(again, www).acceptedEstablishedPerS).toBe(500);
    const next = nextTraffic(again, reading(2, v(1000)));
    expect(trafficForBinds(next, www).acceptedEstablishedPerS).toBe(500);
  });

  it("shows a reading that came after more than twice the interval as late, with no rate", () => {
    let t = nextTraffic(null, reading(0, v(0)));
    t = nextTraffic(t, reading(1, v(500)));
    expect(lateAfterMs(1000)).toBe(3000);
    t = nextTraffic(t, reading(4.5, v(2000)));
    expect(t.lateReason).toBe("the last reading came 3.5 s after the one before (expected every 1 s)");
    expect(trafficLateness(t, new Date(at(4.6)))).toBe(t.lateReason);
    expect(trafficForBinds(t, www)).toMatchObject({ acceptedEstablishedPerS: null, secondChancePerS: null });
    expect(t.rates.acceptedEstablished).toBeNull();
    // On time again: rates from the late reading on.
    t = nextTraffic(t, reading(5.5, v(2500)));
    expect(t.lateReason).toBeNull();
    expect(trafficForBinds(t, www)).toMatchObject({ acceptedEstablishedPerS: 500, secondChancePerS: 50 });
    // Within 2 intervals + 1 s: on time (jitter).
    expect(nextTraffic(t, reading(8.4, v(3000))).lateReason).toBeNull();
  });

  it("says a reading is missing when none came for that long", () => {
    let t = nextTraffic(null, reading(0, v(0)));
    t = nextTraffic(t, reading(1, v(500)));
    expect(trafficLateness(t, new Date(at(3.9)))).toBeNull();
    expect(trafficLateness(t, new Date(at(4.2)))).toBe("no reading for 3 s");
    // A value stored before expectedIntervalMs existed is never late.
    const { expectedIntervalMs: _dropped, ...old } = t;
    expect(trafficLateness(old as HostTraffic, new Date(at(60)))).toBeNull();
  });
});

describe("alternateHashRate", () => {
  const alt = (n: number, port = 443) => [vip("203.0.113.10", port, { accepted_alternate_hash: n })];

  it("counts the pool's VIPs' alternate-hash packets over the window, across a restart", () => {
    let t = nextTraffic(null, reading(0, alt(0)));
    for (let s = 1; s <= 40; s++)
      t = nextTraffic(t, reading(s, s === 30 ? alt(5) : alt(s < 30 ? s * 10 : 5 + (s - 30) * 10)));
    // From second 10 to 40: 290 - 100 = 190, then 5 after the restart, then 10 x 10 = 100.
    const r = alternateHashRate(t.alternateHash, www, new Date(at(10)), new Date(at(40)), 3000);
    expect(r).toBeCloseTo((190 + 5 + 100) / 30, 6);
    expect(alternateHashRate(t.alternateHash, api, new Date(at(10)), new Date(at(40)), 3000)).toBe(0);
  });

  it("is 0 when nothing came through the alternate hash, and null without readings over the whole window", () => {
    let t = nextTraffic(null, reading(0, alt(7)));
    for (let s = 1; s <= 40; s++) t = nextTraffic(t, reading(s, alt(7)));
    expect(alternateHashRate(t.alternateHash, www, new Date(at(10)), new Date(at(40)), 3000)).toBe(0);
    // The host went silent 10 s ago: no answer for now.
    expect(alternateHashRate(t.alternateHash, www, new Date(at(20)), new Date(at(50)), 3000)).toBeNull();
    // Readings began after the window did.
    expect(alternateHashRate(t.alternateHash, www, new Date(at(-30)), new Date(at(40)), 3000)).toBeNull();
    expect(alternateHashRate(undefined, www, new Date(at(10)), new Date(at(40)), 3000)).toBeNull();
  });

  it(`keeps ${ALTERNATE_HASH_KEEP_MS / 1000} s of readings and the one before them`, () => {
    let t = nextTraffic(null, reading(0, alt(1)));
    for (let s = 1; s <= 300; s++) t = nextTraffic(t, reading(s, alt(1)));
    expect(t.alternateHash).toHaveLength(ALTERNATE_HASH_KEEP_MS / 1000 + 2);
    expect(t.alternateHash?.[0]?.[0]).toBe(at(300 - ALTERNATE_HASH_KEEP_MS / 1000 - 1));
  });
});
