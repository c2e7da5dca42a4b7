import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseProcNetCounters, parseSockstat } from "./counters";

const fixture = (name: string): string =>
  readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), "utf8");

describe("parseProcNetCounters", () => {
  it("keys /proc/net/netstat values by nstat name", () => {
    const c = parseProcNetCounters(fixture("netstat.txt"));
    expect(c.TcpExtListenOverflows).toBe(0);
    expect(c.TcpExtTCPReqQFullDoCookies).toBe(0);
    expect(Object.keys(c).some((k) => k.startsWith("IpExt"))).toBe(true);
    expect(Object.values(c).every((v) => Number.isInteger(v) && v >= 0)).toBe(true);
  });

  it("reads /proc/net/snmp including IcmpMsg and skips negative values (Tcp MaxConn -1)", () => {
    const c = parseProcNetCounters(fixture("snmp.txt"));
    expect(c.IcmpMsgInType3).toBe(1);
    expect(c.TcpActiveOpens).toBe(348);
    expect(c.TcpMaxConn).toBeUndefined();
    expect(c.IpFragFails).toBe(0);
  });

  it("merges several files into one snapshot", () => {
    const c = parseProcNetCounters(fixture("netstat.txt"));
    parseProcNetCounters(fixture("snmp.txt"), c);
    expect(c.TcpExtListenDrops).toBe(0);
    expect(c.UdpInDatagrams).toBeGreaterThanOrEqual(0);
  });

  it("parses a hand-written pair with non-zero values", () => {
    const text =
      "TcpExt: ListenOverflows ListenDrops TCPRcvCollapsed\nTcpExt: 12 13 7\nIcmpMsg: OutType3\nIcmpMsg: 5\n";
    expect(parseProcNetCounters(text)).toEqual({
      TcpExtListenOverflows: 12,
      TcpExtListenDrops: 13,
      TcpExtTCPRcvCollapsed: 7,
      IcmpMsgOutType3: 5,
    });
  });

  it("resynchronises when a header line has no value line", () => {
    const text = "TcpExt: A B\nIp: Forwarding FragFails\nIp: 1 9\n";
    expect(parseProcNetCounters(text)).toEqual({ IpForwarding: 1, IpFragFails: 9 });
  });

  it("returns nothing for empty input", () => {
    expect(parseProcNetCounters("")).toEqual({});
  });
});

describe("parseSockstat", () => {
  it("reads the TCP line of a real sockstat", () => {
    expect(parseSockstat(fixture("sockstat.txt"))).toEqual({
      tcpInuse: 2,
      tcpOrphan: 2,
      tcpTw: 0,
      tcpAlloc: 4,
      tcpMemPages: 0,
    });
  });

  it("returns null without a TCP line", () => {
    expect(parseSockstat("sockets: used 3\nUDP: inuse 0 mem 0\n")).toBeNull();
  });
});
