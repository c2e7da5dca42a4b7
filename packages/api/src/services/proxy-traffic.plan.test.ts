import type { RedirectCounters } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { redirectCounters } from "../testing/redirect-counters";
import { establishedToBinds, fallRate, inBind, nextTraffic, type TrafficSample } from "./proxy-traffic.plan";

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
    expect(t.rates).toEqual({ newConnections: null, forwardedToAlternate: null, acceptedEstablished: null });
    t = nextTraffic(
      t,
      sample(2, { accepted_syn: 160, forwarded_to_alternate: 10, accepted_established: 45 }),
    );
    expect(t.rates).toEqual({ newConnections: 30, forwardedToAlternate: 0, acceptedEstablished: 20 });
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
