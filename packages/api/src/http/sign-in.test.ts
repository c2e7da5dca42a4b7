import { describe, expect, it } from "vitest";
import { bareAddress, clientAddress, PEER_ADDRESS_HEADER, trustedProxyList } from "./sign-in";

const none = trustedProxyList([]);
const nginxHere = trustedProxyList(["127.0.0.1", "::1"]);
const lbNetwork = trustedProxyList(["10.0.0.0/8", "fd00::/8", "127.0.0.1"]);

const headers = (peer: string | null, forwardedFor?: string) =>
  new Headers({
    ...(peer !== null ? { [PEER_ADDRESS_HEADER]: peer } : {}),
    ...(forwardedFor !== undefined ? { "x-forwarded-for": forwardedFor } : {}),
  });

describe("clientAddress", () => {
  it.each([
    // [peer, X-Forwarded-For, trusted, client]
    ["192.0.2.10", undefined, none, "192.0.2.10"],
    // No trusted proxies: whatever a client writes is ignored (issue 27: 40 of 40 forged sources got through).
    ["192.0.2.10", "203.0.113.1", none, "192.0.2.10"],
    ["192.0.2.10", "203.0.113.1, 198.51.100.1", none, "192.0.2.10"],
    // A peer that is not trusted is the client even when it says it is a proxy.
    ["192.0.2.10", "203.0.113.1", nginxHere, "192.0.2.10"],
    // nginx on this host appends the address it saw; the client's own entries to its left are ignored.
    ["127.0.0.1", "198.51.100.7", nginxHere, "198.51.100.7"],
    ["127.0.0.1", "6.6.6.6, 198.51.100.7", nginxHere, "198.51.100.7"],
    ["::1", "2001:db8::7", nginxHere, "2001:db8::7"],
    // A dual-stack socket reports a v4 peer as ::ffff:a.b.c.d.
    ["::ffff:127.0.0.1", "198.51.100.7", nginxHere, "198.51.100.7"],
    ["::ffff:192.0.2.10", "198.51.100.7", nginxHere, "192.0.2.10"],
    // A chain of trusted proxies (a load balancer in 10/8, then nginx) is walked to the client.
    ["127.0.0.1", "6.6.6.6, 198.51.100.7, 10.1.2.3", lbNetwork, "198.51.100.7"],
    ["127.0.0.1", "198.51.100.7, fd00::5", lbNetwork, "198.51.100.7"],
    // A trusted proxy with nothing to vouch for is the client itself.
    ["127.0.0.1", undefined, nginxHere, "127.0.0.1"],
    // Garbage left of a trusted proxy: the proxy's clients share its address instead of escaping the count.
    ["127.0.0.1", "not-an-address", nginxHere, "127.0.0.1"],
    ["127.0.0.1", "unknown, 10.1.2.3", lbNetwork, "10.1.2.3"],
    // Without tide-console serve (next start): X-Forwarded-For alone, its last entry (Next's socket address when the client sent none).
    [null, "192.0.2.10", none, "192.0.2.10"],
    [null, undefined, none, null],
  ] as const)("peer %s, X-Forwarded-For %s -> %s", (peer, xff, trusted, client) => {
    expect(clientAddress(headers(peer, xff), trusted)).toBe(client);
  });
});

describe("bareAddress", () => {
  it.each([
    ["203.0.113.5", "203.0.113.5"],
    [" ::FFFF:203.0.113.5 ", "203.0.113.5"],
    ["203.0.113.5:4711", "203.0.113.5"],
    ["[2001:db8::1]:443", "2001:db8::1"],
    ["fe80::1%eth0", "fe80::1"],
    ["2001:DB8::1", "2001:db8::1"],
    ["", null],
    ["unknown", null],
    ["203.0.113.256", null],
  ])("%j -> %j", (raw, bare) => {
    expect(bareAddress(raw)).toBe(bare);
  });
});
