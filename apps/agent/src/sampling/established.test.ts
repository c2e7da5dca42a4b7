import { describe, expect, it } from "vitest";
import { canonicalLocalAddress, parseSsEstablished, splitSsStates, topEstablished } from "./established";

// Real `ss -Htn state listening state established` output (iproute2 6.1): a v4 listener with two
// accepted connections and their client ends, a v6 one, a dual-stack listener's accepted socket
// (IPv4-mapped) and a link-local socket with a scope.
const SS = `LISTEN 0      4096            10.77.0.1:8080             0.0.0.0:*
LISTEN 0      4096            [fd77::1]:8443                [::]:*
LISTEN 0      4096                    *:8082                   *:*
ESTAB  0      0               10.77.0.1:8080           10.77.0.1:40198
ESTAB  0      0               10.77.0.1:8080           10.77.0.1:40140
ESTAB  0      0               10.77.0.1:40198          10.77.0.1:8080
ESTAB  0      0               10.77.0.1:40140          10.77.0.1:8080
ESTAB  0      0      [::ffff:10.77.0.1]:8082  [::ffff:10.77.0.1]:53170
ESTAB  0      0               10.77.0.1:53170          10.77.0.1:8082
ESTAB  0      0               [fd77::1]:8443           [fd77::1]:37632
ESTAB  0      36              [fd77::1]:37632          [fd77::1]:8443
ESTAB  0      0        [fe80::1]%eth0:22          [fe80::2]%eth0:50000
`;

describe("splitSsStates", () => {
  it("sends LISTEN lines one way and ESTAB lines the other", () => {
    const { listening, established } = splitSsStates(SS);
    expect(listening.split("\n")).toHaveLength(3);
    expect(listening.split("\n").every((l) => l.startsWith("LISTEN"))).toBe(true);
    expect(established.split("\n")).toHaveLength(9);
    expect(splitSsStates("")).toEqual({ listening: "", established: "" });
  });
});

describe("parseSsEstablished", () => {
  it("counts per local address:port, busiest first, ties by port then address", () => {
    expect(parseSsEstablished(splitSsStates(SS).established)).toEqual({
      established: [
        { address: "10.77.0.1", port: 8080, count: 2 },
        { address: "fe80::1", port: 22, count: 1 },
        { address: "10.77.0.1", port: 8082, count: 1 }, // the IPv4-mapped accepted socket
        { address: "fd77::1", port: 8443, count: 1 },
        { address: "fd77::1", port: 37632, count: 1 },
        { address: "10.77.0.1", port: 40140, count: 1 },
        { address: "10.77.0.1", port: 40198, count: 1 },
        { address: "10.77.0.1", port: 53170, count: 1 },
      ],
      establishedTotal: 9,
    });
  });

  it("accepts lines without the state column and skips junk", () => {
    expect(
      parseSsEstablished(
        "0 0 10.0.0.1:443 10.0.0.2:5000\n0 0 10.0.0.1:443 10.0.0.3:5000\nRecv-Q x\n\n0 0 a:99999 b:1",
      ),
    ).toEqual({ established: [{ address: "10.0.0.1", port: 443, count: 2 }], establishedTotal: 2 });
    expect(parseSsEstablished("")).toEqual({ established: [], establishedTotal: 0 });
  });

  it("lists the 256 busiest and still counts every socket in the total", () => {
    const lines: string[] = [];
    for (let port = 1; port <= 300; port++) {
      for (let i = 0; i < (port === 300 ? 5 : 1); i++)
        lines.push(`0 0 10.0.0.1:${port} 10.0.0.2:${40000 + i}`);
    }
    const { established, establishedTotal } = parseSsEstablished(lines.join("\n"));
    expect(establishedTotal).toBe(304);
    expect(established).toHaveLength(256);
    expect(established[0]).toEqual({ address: "10.0.0.1", port: 300, count: 5 });
    expect(established[1]).toEqual({ address: "10.0.0.1", port: 1, count: 1 });
    expect(established[255]!.port).toBe(255);
  });
});

describe("canonicalLocalAddress", () => {
  it.each([
    ["10.0.0.1", "10.0.0.1"],
    ["[::ffff:10.0.0.1]", "10.0.0.1"],
    ["[2001:DB8::1]", "2001:db8::1"],
    ["[fe80::1]%eth0", "fe80::1"],
    ["127.0.0.53%lo", "127.0.0.53"],
  ])("%s -> %s", (text, address) => expect(canonicalLocalAddress(text)).toBe(address));
});

describe("compareEstablished", () => {
  it("orders as tide-nsdiag: count desc, port, IPv4 before IPv6, address bytes", () => {
    const list = [
      { address: "fd00::2", port: 80, count: 1 },
      { address: "fd00::10", port: 80, count: 1 },
      { address: "10.0.0.10", port: 80, count: 1 },
      { address: "10.0.0.9", port: 80, count: 1 },
      { address: "::1", port: 80, count: 1 },
      { address: "10.0.0.1", port: 22, count: 1 },
      { address: "10.0.0.1", port: 443, count: 9 },
    ];
    expect(topEstablished(new Map(list.map((e) => [`${e.address} ${e.port}`, e])))).toEqual([
      { address: "10.0.0.1", port: 443, count: 9 },
      { address: "10.0.0.1", port: 22, count: 1 },
      { address: "10.0.0.9", port: 80, count: 1 },
      { address: "10.0.0.10", port: 80, count: 1 },
      { address: "::1", port: 80, count: 1 },
      { address: "fd00::2", port: 80, count: 1 },
      { address: "fd00::10", port: 80, count: 1 },
    ]);
  });
});
