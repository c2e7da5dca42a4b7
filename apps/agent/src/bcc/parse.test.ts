import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { log2Bucket } from "@tide/diagnostics";
import { parseSoftirqsDist, parseTcpConnLatLine } from "./parse";

const fixture = (name: string) => readFileSync(path.join(import.meta.dirname, "__fixtures__", name), "utf8");

describe("tcpconnlat lines", () => {
  const events = fixture("tcpconnlat.txt")
    .split("\n")
    .map(parseTcpConnLatLine)
    .filter((e) => e !== null);

  it("parses IPv4, IPv6 and names with spaces; skips the header and notices", () => {
    expect(events).toHaveLength(7);
    expect(events[0]).toEqual({
      pid: 1201,
      comm: "wget",
      family: 4,
      saddr: "10.153.223.157",
      daddr: "23.23.100.231",
      dport: 80,
      latencyUs: 1650,
    });
    expect(events[3]!.latencyUs).toBeCloseTo(250_860, 6);
    expect(events[4]).toMatchObject({ pid: 20337, comm: "python2.7", family: 6, dport: 7001 });
    expect(events[5]).toMatchObject({ comm: "nc", saddr: "::1", latencyUs: 50 });
    expect(events[6]).toMatchObject({ pid: 31337, comm: "Web Content", dport: 8080 });
  });

  it("refuses lines that only look like events", () => {
    for (const line of [
      "",
      "PID    COMM         IP SADDR            DADDR            DPORT LAT(ms)",
      "12 curl 5 10.0.0.1 10.0.0.2 80 1.0",
      "12 curl 4 10.0.0.1 10.0.0.2 70000 1.0",
      "12 curl 4 10.0.0.1 10.0.0.2 80 -1",
      "x curl 4 10.0.0.1 10.0.0.2 80 1.0",
      "12 curl 4 host-a host-b 80 1.0",
    ])
      expect(parseTcpConnLatLine(line), line).toBeNull();
  });
});

describe("softirqs -d", () => {
  it("turns bcc's [lo, hi] slots into the contract's log2 buckets per softirq", () => {
    const h = parseSoftirqsDist(fixture("softirqs-dist.txt"));
    expect([...h.keys()]).toEqual(["net_tx", "net_rx", "timer"]);
    expect(h.get("net_tx")).toEqual([0, 0, 12]);
    const netRx = h.get("net_rx")!;
    expect(netRx.slice(0, 4)).toEqual([3, 40, 1700, 220]);
    expect(netRx[14]).toBe(2); // 16384 -> 32767 µs
    expect(netRx).toHaveLength(15);
    expect(h.get("timer")).toEqual([9]);
  });

  it("accepts older bcc's action function names and ignores rows outside a section", () => {
    const h = parseSoftirqsDist("   2 -> 3 : 5 |*|\nsoftirq = net_rx_action\n  4 -> 7 : 6 |*|\n");
    expect([...h.entries()]).toEqual([["net_rx", [0, 0, 6]]]);
  });

  it("buckets values like the probes do", () => {
    expect([0, 1.9, 2, 3.99, 4, 1024, 2047, 1e12].map(log2Bucket)).toEqual([0, 0, 1, 1, 2, 10, 10, 31]);
  });
});
