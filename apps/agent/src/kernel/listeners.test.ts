import { describe, expect, it } from "vitest";
import { listenPortCounts, parseSsListeners } from "./listeners";

// Real `ss -ltnH` output (iproute2 6.1) with IPv4, IPv6, wildcard and scoped addresses.
const SS = `LISTEN 0      244        127.0.0.1:5433       0.0.0.0:*
LISTEN 0      128          0.0.0.0:2024       0.0.0.0:*
LISTEN 129    128          0.0.0.0:8080       0.0.0.0:*
LISTEN 0      4096               *:9464             *:*
LISTEN 0      511             [::]:80            [::]:*
LISTEN 0      128            [::1]:631           [::]:*
LISTEN 0      10    127.0.0.53%lo:53         0.0.0.0:*
LISTEN 0      128 [fe80::1]%eth0:22             [::]:*
`;

describe("parseSsListeners", () => {
  it("reads Recv-Q, Send-Q, address and port", () => {
    const l = parseSsListeners(SS);
    expect(l).toHaveLength(8);
    expect(l[2]).toEqual({ address: "0.0.0.0", port: 8080, recvQ: 129, sendQ: 128, requestedBacklog: null });
    expect(l[3]).toMatchObject({ address: "*", port: 9464, sendQ: 4096 });
    expect(l[4]).toMatchObject({ address: "::", port: 80, sendQ: 511 });
    expect(l[5]).toMatchObject({ address: "::1", port: 631 });
    expect(l[6]).toMatchObject({ address: "127.0.0.53", port: 53, sendQ: 10 });
    expect(l[7]).toMatchObject({ address: "fe80::1", port: 22 });
  });

  it("accepts output without the state column and ignores junk", () => {
    expect(parseSsListeners("0 5 10.0.0.1:443 0.0.0.0:*\nState Recv-Q\n\n")).toEqual([
      { address: "10.0.0.1", port: 443, recvQ: 0, sendQ: 5, requestedBacklog: null },
    ]);
  });

  it("counts listeners per port", () => {
    const l = parseSsListeners(
      "LISTEN 0 5 10.0.0.1:53 0.0.0.0:*\nLISTEN 0 5 10.0.0.2:53 0.0.0.0:*\nLISTEN 0 5 [::]:22 [::]:*\n",
    );
    expect(listenPortCounts(l)).toEqual([
      { port: 22, sockets: 1 },
      { port: 53, sockets: 2 },
    ]);
  });
});
