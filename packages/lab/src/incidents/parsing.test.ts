import { describe, expect, it } from "vitest";
import { parseSsListen } from "./namespace";
import { parsePing, parseTracepath } from "./pmtu-blackhole";
import { parseSoftnetStat } from "./softirq-stall";

describe("incident output parsers", () => {
  it("parses /proc/net/softnet_stat (hex columns; the CPU is column 13 on modern kernels)", () => {
    const text =
      "0001e240 0000000a 00000003 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n" +
      "000003e8 00000000 000000ff 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000002 00000000\n";
    expect(parseSoftnetStat(text)).toEqual([
      { cpu: 0, processed: 123456, dropped: 10, timeSqueeze: 3 },
      // An offline CPU 1 has no row: the row's own column says this is CPU 2.
      { cpu: 2, processed: 1000, dropped: 0, timeSqueeze: 255 },
    ]);
  });

  it("parses ss -ltnH", () => {
    const text = "LISTEN 11     10      10.201.1.1:8081      0.0.0.0:*\nLISTEN 0 4096 [::1]:53 [::]:*\n";
    expect(parseSsListen(text)).toEqual([
      { local: "10.201.1.1:8081", port: 8081, recvQ: 11, sendQ: 10 },
      { local: "[::1]:53", port: 53, recvQ: 0, sendQ: 4096 },
    ]);
  });

  it("parses a blackholed and a reporting ping", () => {
    expect(parsePing("3 packets transmitted, 0 received, 100% packet loss, time 409ms")).toEqual({
      transmitted: 3,
      received: 0,
      errors: [],
      reportedMtu: null,
    });
    const p = parsePing(
      "From 10.201.31.1 icmp_seq=1 Frag needed and DF set (mtu = 1200)\nping: local error: message too long, mtu=1200\n" +
        "3 packets transmitted, 0 received, +3 errors, 100% packet loss",
    );
    expect(p.reportedMtu).toBe(1200);
    expect(p.errors).toHaveLength(2);
  });

  it("parses tracepath footers", () => {
    expect(
      parseTracepath(" 1?: [LOCALHOST] pmtu 1500\n 2:  no reply\n     Too many hops: pmtu 1500\n").pmtu,
    ).toBe(1500);
    const ok = parseTracepath(" 3:  10.201.33.2  0.020ms reached\n     Resume: pmtu 1200 hops 3 back 3 \n");
    expect(ok).toMatchObject({ pmtu: 1200, reached: true });
  });
});
