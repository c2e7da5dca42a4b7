import { describe, expect, it } from "vitest";
import { parseSysctlLines, parseSysctls } from "./sysctls";

// `cd /proc/sys && grep -H . <paths>` as the namespace helper runs it (tcp_rmem is tab-separated).
const GREP = [
  "net/core/somaxconn:128",
  "net/ipv4/tcp_max_syn_backlog:2048",
  "net/ipv4/tcp_syncookies:1",
  "net/ipv4/tcp_rmem:4096\t131072\t33554432",
  "net/ipv4/ip_local_port_range:32768\t60999",
  "net/ipv4/tcp_mtu_probing:0",
  "",
].join("\n");

describe("parseSysctls", () => {
  it("parses every sysctl", () => {
    expect(parseSysctls(parseSysctlLines(GREP))).toEqual({
      somaxconn: 128,
      tcpMaxSynBacklog: 2048,
      tcpSyncookies: 1,
      tcpRmem: [4096, 131072, 33554432],
      ipLocalPortRange: [32768, 60999],
      tcpMtuProbing: 0,
    });
  });

  it("gives null for missing or malformed values", () => {
    const s = parseSysctls(
      parseSysctlLines("net/core/somaxconn:abc\nnet/ipv4/tcp_syncookies:7\nnet/ipv4/tcp_rmem:1 2\n"),
    );
    expect(s).toEqual({
      somaxconn: null,
      tcpMaxSynBacklog: null,
      tcpSyncookies: null,
      tcpRmem: null,
      ipLocalPortRange: null,
      tcpMtuProbing: null,
    });
  });
});
