import type { ProxyState } from "@tide/contracts";
import { TideError } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import {
  bindChangeRefusal,
  breakSummary,
  forwards,
  parseBindLabels,
  planBindChange,
  planBreak,
  planDirectorRemoval,
  planUnassign,
  removalRefusal,
  uncoveredBinds,
  unassignRefusal,
  type EstablishedEntry,
  type ProxyEstablished,
  type SafetyProxy,
} from "./change-safety.plan";
import type { BindRange } from "../telemetry/proxy-traffic.plan";

const bind = (
  address: string,
  portStart: number,
  portEnd = portStart,
  proto: "tcp" | "udp" = "tcp",
): BindRange => {
  const [, bits] = address.split("/");
  return {
    address,
    prefixBits: bits === undefined ? (address.includes(":") ? 128 : 32) : Number(bits),
    proto,
    portStart,
    portEnd,
  };
};

const proxy = (i: number, state: ProxyState = "active"): SafetyProxy => ({
  id: `prx_${i}`,
  hostname: `lab-proxy-${i}`,
  state,
});

const e = (address: string, port: number, count: number): EstablishedEntry => ({ address, port, count });
const reported = (entries: EstablishedEntry[]): ProxyEstablished => ({ entries });
const unknown = (reason: string): ProxyEstablished => ({ entries: null, reason });

/** The example: 7 + 5 connections to 10.77.0.1:8081, and some to :8080 that stays. */
const LAB = new Map<string, ProxyEstablished>([
  ["prx_1", reported([e("10.77.0.1", 8081, 7), e("10.77.0.1", 8080, 30), e("10.99.0.1", 5432, 900)])],
  ["prx_2", reported([e("10.77.0.1", 8081, 5), e("10.77.0.1", 8080, 20)])],
]);

describe("forwards and uncoveredBinds", () => {
  it("matches TCP only, by network and port range", () => {
    const binds = [bind("10.77.0.0/24", 8080, 8089), bind("10.77.1.1", 53, 53, "udp")];
    expect(forwards(binds, { address: "10.77.0.200", port: 8089 })).toBe(true);
    expect(forwards(binds, { address: "10.77.0.200", port: 8090 })).toBe(false);
    expect(forwards(binds, { address: "10.77.1.1", port: 53 })).toBe(false); // udp bind
  });

  it.each([
    [
      "a bind removed",
      [bind("10.77.0.1", 8080), bind("10.77.0.1", 8081)],
      [bind("10.77.0.1", 8080)],
      ["tcp/10.77.0.1:8081"],
    ],
    [
      "a port range narrowed",
      [bind("10.77.0.1", 8080, 8089)],
      [bind("10.77.0.1", 8080, 8085)],
      ["tcp/10.77.0.1:8080-8089"],
    ],
    ["a network narrowed", [bind("10.77.0.0/24", 80)], [bind("10.77.0.0/25", 80)], ["tcp/10.77.0.0/24:80"]],
    [
      "the protocol changed",
      [bind("10.77.0.1", 53)],
      [bind("10.77.0.1", 53, 53, "udp")],
      ["tcp/10.77.0.1:53"],
    ],
    ["a bind added", [bind("10.77.0.1", 8080)], [bind("10.77.0.1", 8080), bind("10.77.0.2", 80)], []],
    ["a range widened", [bind("10.77.0.1", 8080)], [bind("10.77.0.1", 8000, 8099)], []],
    [
      "a port left out between two ranges",
      [bind("10.77.0.1", 8080, 8089)],
      [bind("10.77.0.1", 8080, 8084), bind("10.77.0.1", 8086, 8089)],
      ["tcp/10.77.0.1:8080-8089"],
    ],
    [
      "a range split in two",
      [bind("10.77.0.1", 8080, 8089)],
      [bind("10.77.0.1", 8080, 8084), bind("10.77.0.1", 8085, 8089)],
      [],
    ],
    ["an address moved into a network", [bind("10.77.0.1", 80)], [bind("10.77.0.0/24", 80)], []],
    ["IPv6 kept", [bind("2001:db8::10", 443)], [bind("2001:db8::10", 443)], []],
  ])("%s", (_, before, after, expected) => {
    expect(uncoveredBinds(before, after)).toEqual(expected);
  });
});

describe("planBreak", () => {
  it("counts what is cut per proxy and per VIP, busiest first; inactive proxies hold nothing", () => {
    const core = planBreak(
      [proxy(1), proxy(2), proxy(3, "inactive")],
      new Map([...LAB, ["prx_3", reported([e("10.77.0.1", 8081, 99)])]]),
      (x) => x.address === "10.77.0.1",
    );
    expect(core).toEqual({
      breaks: true,
      broken: 62,
      proxies: [
        { proxyId: "prx_1", hostname: "lab-proxy-1", broken: 37 },
        { proxyId: "prx_2", hostname: "lab-proxy-2", broken: 25 },
      ],
      endpoints: [
        { address: "10.77.0.1", port: 8080, count: 50 },
        { address: "10.77.0.1", port: 8081, count: 12 },
      ],
      unknown: [],
    });
  });

  it("an unknown proxy is named, never 0: null when the reported ones break none", () => {
    const established = new Map([
      ["prx_1", reported([e("10.77.0.1", 8080, 3)])],
      ["prx_2", unknown("no report for 12 s")],
    ]);
    const cut8081 = (x: EstablishedEntry) => x.port === 8081;
    expect(planBreak([proxy(1), proxy(2)], established, cut8081)).toMatchObject({
      breaks: null,
      broken: 0,
      proxies: [{ proxyId: "prx_2", broken: null }],
      unknown: [{ proxyId: "prx_2", hostname: "lab-proxy-2", reason: "no report for 12 s" }],
    });
    // A proxy missing from the reports is unknown too.
    expect(planBreak([proxy(3)], established, cut8081).unknown).toEqual([
      { proxyId: "prx_3", hostname: "lab-proxy-3", reason: "no report from its host" },
    ]);
    // A known break with an unknown proxy beside it: true, at least that many.
    expect(planBreak([proxy(1), proxy(2)], established, () => true)).toMatchObject({
      breaks: true,
      broken: 3,
    });
  });

  it("false only when every proxy in the table reported and none breaks", () => {
    expect(planBreak([proxy(1), proxy(2)], LAB, (x) => x.port === 9999)).toMatchObject({
      breaks: false,
      broken: 0,
      proxies: [],
    });
  });

  it("names the busiest addresses and counts the rest", () => {
    const many = reported([1, 2, 3, 4, 5, 6].map((i) => e("10.77.0.1", 8080 + i, 10 - i)));
    const core = planBreak([proxy(1)], new Map([["prx_1", many]]), () => true);
    expect(breakSummary(core)).toBe(
      "39 established connections (39 on lab-proxy-1) to 10.77.0.1:8081, 10.77.0.1:8082, " +
        "10.77.0.1:8083, 10.77.0.1:8084 and 2 more addresses:ports",
    );
    const v6 = planBreak([proxy(1)], new Map([["prx_1", reported([e("2001:db8::10", 443, 1)])]]), () => true);
    expect(breakSummary(v6)).toBe("1 established connection (1 on lab-proxy-1) to [2001:db8::10]:443");
  });
});

describe("planBindChange", () => {
  const before = [bind("10.77.0.1", 8080), bind("10.77.0.1", 8081)];
  const proxies = [proxy(1), proxy(2)];

  it("removing a bind with connections: they break, and the refusal names count, proxies and VIP", () => {
    const p = planBindChange({
      served: true,
      before,
      after: [bind("10.77.0.1", 8080)],
      proxies,
      established: LAB,
    });
    expect(p).toMatchObject({ breaks: true, broken: 12, uncovered: ["tcp/10.77.0.1:8081"] });
    expect(p.message).toBe(
      "The directors stop forwarding tcp/10.77.0.1:8081: 12 established connections (7 on lab-proxy-1, " +
        "5 on lab-proxy-2) to 10.77.0.1:8081 break.",
    );
    const refusal = bindChangeRefusal(p, "lab");
    expect(refusal).toBeInstanceOf(TideError);
    expect(refusal?.code).toBe("unprocessable");
    expect(refusal?.message).toMatch(
      /^This change would break 12 established connections \(7 on lab-proxy-1, 5 on lab-proxy-2\) to 10\.77\.0\.1:8081, as the proxies last reported: .* Give a reason to apply it anyway/,
    );
    expect(refusal?.details).toMatchObject({ broken: 12 });
  });

  it("adding a bind breaks nothing, and asks no proxy", () => {
    const p = planBindChange({
      served: true,
      before,
      after: [...before, bind("10.77.0.2", 80)],
      proxies,
      established: new Map(),
    });
    expect(p).toMatchObject({ breaks: false, broken: 0, uncovered: [], unknown: [] });
    expect(bindChangeRefusal(p, "lab")).toBeNull();
  });

  it("a pool no director serves breaks nothing whatever its proxies hold", () => {
    const p = planBindChange({
      served: false,
      before,
      after: [bind("10.77.0.1", 8080)],
      proxies,
      established: LAB,
    });
    expect(p).toMatchObject({ breaks: false, served: false, uncovered: ["tcp/10.77.0.1:8081"] });
  });

  it("unknown counts do not refuse", () => {
    const p = planBindChange({
      served: true,
      before,
      after: [bind("10.77.0.1", 8080)],
      proxies,
      established: new Map([["prx_1", unknown("no report for 40 s")]]),
    });
    expect(p.breaks).toBeNull();
    expect(p.message).toContain("how many is unknown: no fresh report from lab-proxy-1 (no report for 40 s)");
    expect(bindChangeRefusal(p, "lab")).toBeNull();
  });

  it("a UDP bind removed cuts no reported connection", () => {
    const p = planBindChange({
      served: true,
      before: [...before, bind("10.77.0.1", 53, 53, "udp")],
      after: before,
      proxies,
      established: LAB,
    });
    expect(p).toMatchObject({ breaks: false, uncovered: ["udp/10.77.0.1:53"] });
  });
});

describe("planUnassign and planDirectorRemoval", () => {
  const pool = { id: "pool_lab", name: "lab", binds: [bind("10.77.0.1", 8080, 8081)], hasTable: true };
  const director = { id: "director_a", hostname: "lab-director-1" };

  it("with another director serving the pool nothing breaks, and no proxy is asked", () => {
    const p = planUnassign({
      director,
      pool,
      others: [{ id: "director_b", hostname: "lab-director-2" }],
      proxies: [proxy(1)],
      established: new Map(),
    });
    expect(p).toMatchObject({ breaks: false, last: false, broken: 0, unknown: [] });
    expect(p.message).toBe(
      "Nothing breaks: lab-director-2 still serves lab with the same table, and the routers move " +
        "lab-director-1's flows there.",
    );
    expect(unassignRefusal(p, director.hostname)).toBeNull();
  });

  it("the last director: every connection to the pool's binds breaks; the refusal says to assign another first", () => {
    const p = planUnassign({ director, pool, others: [], proxies: [proxy(1), proxy(2)], established: LAB });
    expect(p).toMatchObject({ breaks: true, last: true, broken: 62 });
    const refusal = unassignRefusal(p, director.hostname);
    expect(refusal?.code).toBe("unprocessable");
    expect(refusal?.message).toContain(
      "would break 62 established connections (37 on lab-proxy-1, 25 on lab-proxy-2)",
    );
    expect(refusal?.message).toContain("Assign another director to lab first");
    expect(refusal?.message).toContain("Give a reason to apply it anyway");
  });

  it("the last director of a pool with no table breaks nothing", () => {
    const p = planUnassign({
      director,
      pool: { ...pool, hasTable: false },
      others: [],
      proxies: [proxy(1)],
      established: LAB,
    });
    expect(p).toMatchObject({ breaks: false, last: true, broken: 0 });
  });

  it("removal: the sum over its pools, true if any breaks, refused naming those pools", () => {
    const a = planUnassign({ director, pool, others: [], proxies: [proxy(1), proxy(2)], established: LAB });
    const b = planUnassign({
      director,
      pool: { ...pool, id: "pool_web", name: "web" },
      others: [{ id: "director_b", hostname: "lab-director-2" }],
      proxies: [],
      established: new Map(),
    });
    const r = planDirectorRemoval(director, [a, b]);
    expect(r).toMatchObject({ breaks: true, broken: 62 });
    expect(removalRefusal(r)?.message).toMatch(
      /of pool lab, as the proxies last reported: it is the last director of lab,/,
    );
    expect(removalRefusal(planDirectorRemoval(director, [b]))).toBeNull();
    expect(planDirectorRemoval(director, []).message).toBe("lab-director-1 serves no pool: nothing breaks.");
  });
});

describe("parseBindLabels", () => {
  it("reads bindLabel's form, IPv6 without brackets", () => {
    expect(parseBindLabels("tcp/10.77.0.1:8080, tcp/10.77.0.0/24:8000-8099,udp/2001:db8::10:53")).toEqual([
      { proto: "tcp", address: "10.77.0.1", portStart: 8080, portEnd: 8080 },
      { proto: "tcp", address: "10.77.0.0/24", portStart: 8000, portEnd: 8099 },
      { proto: "udp", address: "2001:db8::10", portStart: 53, portEnd: 53 },
    ]);
  });

  it("names the malformed bind", () => {
    const err = (() => {
      try {
        parseBindLabels("tcp/10.77.0.1:80,sctp/10.77.0.1:80");
      } catch (x) {
        return x as TideError;
      }
    })();
    expect(err?.code).toBe("bad_request");
    expect(err?.details).toMatchObject({
      fields: { "binds[1]": expect.stringContaining("sctp/10.77.0.1:80") },
    });
  });
});
