import { describe, expect, it } from "vitest";
import { bindsOverlap, describeOverlap, findBindOverlaps, type PlacedBind } from "./bind-overlap.plan";

/** "tcp 203.0.113.64/26 8000-8099" (space-separated so IPv6 colons need no escaping). */
function bind(spec: string, poolName = "web"): PlacedBind {
  const [proto, address, ports] = spec.split(" ") as [string, string, string];
  const [net, prefix] = address.split("/");
  const [start, end] = ports.split("-");
  return {
    poolId: `pool_${poolName}`,
    poolName,
    address,
    prefixBits: prefix ? Number(prefix) : net!.includes(":") ? 128 : 32,
    proto: proto as "tcp" | "udp",
    portStart: Number(start),
    portEnd: Number(end ?? start),
  };
}

describe("bind overlaps", () => {
  it.each([
    ["tcp 203.0.113.10 443", "tcp 203.0.113.10 443", true],
    ["tcp 203.0.113.10 443", "udp 203.0.113.10 443", false],
    ["tcp 203.0.113.10 443", "tcp 203.0.113.10 80", false],
    ["tcp 203.0.113.10 80-443", "tcp 203.0.113.10 443-500", true],
    ["tcp 203.0.113.10 80-442", "tcp 203.0.113.10 443-500", false],
    ["tcp 203.0.113.64/26 8000-8099", "tcp 203.0.113.100 8050", true],
    ["tcp 203.0.113.64/26 8000-8099", "tcp 203.0.113.128 8050", false],
    ["tcp 203.0.113.64/26 8000-8099", "tcp 203.0.113.127 8099", true],
    ["tcp 0.0.0.0/0 53", "tcp 198.51.100.1 53", true],
    ["tcp 2001:db8::10 443", "tcp 2001:db8::11 443", false],
    ["tcp 2001:db8::/64 443", "tcp 2001:db8::11 443", true],
    ["tcp 2001:db8::10 443", "tcp 203.0.113.10 443", false],
  ])("%s vs %s -> %s", (x, y, expected) => {
    expect(bindsOverlap(bind(x), bind(y))).toBe(expected);
    expect(bindsOverlap(bind(y), bind(x))).toBe(expected);
  });

  it("finds pairs across pools and within the incoming list, naming both", () => {
    const incoming = [bind("tcp 203.0.113.10 443", "www"), bind("tcp 203.0.113.0/24 443", "www")];
    const others = [bind("tcp 203.0.113.10 400-500", "api"), bind("udp 203.0.113.10 443", "dns")];
    const found = findBindOverlaps(incoming, others);
    expect(found.map(describeOverlap)).toEqual([
      'Binds tcp/203.0.113.10:443 and tcp/203.0.113.0/24:443 of pool "www" overlap.',
      'Bind tcp/203.0.113.10:443 of pool "www" overlaps bind tcp/203.0.113.10:400-500 of pool "api".',
      'Bind tcp/203.0.113.0/24:443 of pool "www" overlaps bind tcp/203.0.113.10:400-500 of pool "api".',
    ]);
    expect(
      findBindOverlaps([bind("tcp 203.0.113.10 443", "www")], [bind("tcp 203.0.113.11 443", "api")]),
    ).toEqual([]);
  });
});
