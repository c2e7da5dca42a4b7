import { describe, expect, it } from "vitest";
import { summarizeConnections, type ConnectionReport } from "./client-driver";
import { parseNetnsList } from "./host-command";
import { parseProcStat } from "./lab-process";
import { diffNetCounters, parseNetCounters } from "./net-counters";
import { parseRedirectCounters, parseRedirectFilters, redirectResult } from "./redirect-control";

describe("parseNetCounters", () => {
  const snmp = [
    "Ip: Forwarding DefaultTTL InReceives",
    "Ip: 1 64 120",
    "Udp: InDatagrams NoPorts InErrors",
    "Udp: 5 42 0",
    "TcpExt: SyncookiesSent ListenOverflows",
    "TcpExt: 3 7",
  ].join("\n");

  it("reads counters by group and name", () => {
    const c = parseNetCounters(snmp);
    expect(c.Udp).toEqual({ InDatagrams: 5, NoPorts: 42, InErrors: 0 });
    expect(c.TcpExt?.ListenOverflows).toBe(7);
    expect(c.Ip?.InReceives).toBe(120);
  });

  it("subtracts two readings", () => {
    const a = parseNetCounters(snmp);
    const b = parseNetCounters(snmp.replace("Udp: 5 42 0", "Udp: 6 50 0"));
    expect(diffNetCounters(a, b).Udp).toEqual({ InDatagrams: 1, NoPorts: 8, InErrors: 0 });
  });
});

describe("parseProcStat", () => {
  it("reads state and start time even with odd command names", () => {
    const line = "1234 (tide (x) y) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 10";
    expect(parseProcStat(line)).toEqual({ state: "S", startTime: 98765 });
    expect(parseProcStat("garbage")).toBeNull();
  });
});

describe("parseNetnsList", () => {
  it("takes the first word of each line", () => {
    expect(parseNetnsList("tide-glb-prx1 (id: 3)\ntide-glb-client\n\n")).toEqual([
      "tide-glb-prx1",
      "tide-glb-client",
    ]);
  });
});

describe("redirect replies", () => {
  it("unwraps the ok envelope and reads nested counters", () => {
    const result = redirectResult(
      { id: 1, ok: true, result: { counters: { total: 9, accepted_syn: 2, x: "no" } } },
      "r",
    );
    const counters = parseRedirectCounters(result);
    expect(counters.total).toBe(9);
    expect(counters.accepted_syn).toBe(2);
    expect(counters.forwarded_to_alternate).toBe(0);
    expect("x" in counters).toBe(false);
  });

  it("turns a failure into a control_error", () => {
    expect(() =>
      redirectResult({ id: 1, ok: false, error: { code: "internal", message: "boom" } }, "r"),
    ).toThrow(/boom/);
  });
});

describe("summarizeConnections", () => {
  it("counts states, proxies and errors", () => {
    const base: ConnectionReport = {
      id: 1,
      localPort: 40000,
      proxy: "prx1",
      sent: 10,
      echoed: 10,
      state: "open",
      error: null,
      openedMs: 1,
      lastEchoAgoMs: 0,
    };
    const s = summarizeConnections([
      base,
      { ...base, id: 2, proxy: "prx2" },
      { ...base, id: 3, proxy: "prx2", state: "error", error: "ECONNRESET", echoed: 4 },
    ]);
    expect(s).toEqual({
      total: 3,
      byState: { open: 2, error: 1 },
      byProxy: { prx1: 1, prx2: 2 },
      errors: { ECONNRESET: 1 },
      sent: 30,
      echoed: 24,
    });
  });
});

describe("parseRedirectFilters", () => {
  it("finds the tc program a killed tide-redirect left, and only that", () => {
    // `tc filter show dev eth0 ingress` after SIGKILL (measured on the lab's kernel).
    const shown = [
      "filter protocol all pref 1 bpf chain 0 ",
      "filter protocol all pref 1 bpf chain 0 handle 0x7ede tide_redirect:[2654] direct-action not_in_hw id 2654 name tide_redirect tag 461c7e947c0ef9a8 jited ",
      "filter protocol all pref 2 bpf chain 0 ",
      "filter protocol all pref 2 bpf chain 0 handle 0x1 other:[12] direct-action not_in_hw id 12 name other tag 00 jited ",
    ].join("\n");
    expect(parseRedirectFilters(shown)).toEqual([{ pref: 1, handle: "0x7ede" }]);
    expect(parseRedirectFilters("")).toEqual([]);
  });
});
