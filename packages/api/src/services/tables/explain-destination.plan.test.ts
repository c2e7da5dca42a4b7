import { describe, expect, it } from "vitest";
import { destinationRefusal } from "./explain-destination.plan";

const binds = [
  { address: "203.0.113.10", prefixBits: 32, proto: "tcp" as const, portStart: 443, portEnd: 443 },
  { address: "203.0.113.64/26", prefixBits: 26, proto: "udp" as const, portStart: 8000, portEnd: 8099 },
  { address: "2001:db8::10", prefixBits: 128, proto: "tcp" as const, portStart: 80, portEnd: 80 },
];

describe("destinationRefusal", () => {
  it.each([
    ["203.0.113.10", 443],
    ["203.0.113.10", undefined],
    ["203.0.113.100", 8050],
    ["2001:db8::10", 80],
  ])("accepts %s port %s (a bind of the pool)", (addr, port) => {
    expect(destinationRefusal("web", binds, addr, port)).toBeNull();
  });

  it.each([
    ["203.0.113.11", 443, "203.0.113.11:443 is not a bind of pool web"],
    ["203.0.113.10", 80, "203.0.113.10:80 is not a bind of pool web"],
    ["203.0.113.128", 8050, "203.0.113.128:8050 is not a bind"],
    ["2001:db8::11", 80, "[2001:db8::11]:80 is not a bind"],
    ["192.0.2.1", undefined, "192.0.2.1 is not a bind of pool web"],
  ])("refuses %s port %s in plain words", (addr, port, start) => {
    const message = destinationRefusal("web", binds, addr, port);
    expect(message).toContain(start);
    expect(message).toContain(
      "its binds: tcp/203.0.113.10:443, udp/203.0.113.64/26:8000-8099, tcp/2001:db8::10:80",
    );
  });

  it("names an address that is not one", () => {
    expect(destinationRefusal("web", binds, "vip.example", 443)).toBe(
      "vip.example is not an IPv4 or IPv6 address.",
    );
  });
});
