import { describe, expect, it } from "vitest";
import {
  AddressError,
  canonicalAddress,
  formatAddress,
  parseAddress,
  parseCidr,
  parseEndpoint,
} from "./address";

describe("addresses", () => {
  it.each([
    ["10.11.12.13", "10.11.12.13", "0a0b0c0d"],
    ["0.0.0.0", "0.0.0.0", "00000000"],
    ["2001:DB8::10", "2001:db8::10", "20010db8000000000000000000000010"],
    ["::", "::", "00000000000000000000000000000000"],
    ["::1", "::1", "00000000000000000000000000000001"],
    ["fdb4:98ce:52d4::42", "fdb4:98ce:52d4::42", "fdb498ce52d400000000000000000042"],
    ["1:0:0:2:0:0:0:3", "1:0:0:2::3", "00010000000000020000000000000003"],
    ["1:0:2:0:3:0:4:0", "1:0:2:0:3:0:4:0", "00010000000200000003000000040000"],
    ["::ffff:1.2.3.4", "::ffff:102:304", "00000000000000000000ffff01020304"],
  ])("parses %s", (text, canonical, bytes) => {
    const parsed = parseAddress(text);
    expect(Buffer.from(parsed.bytes).toString("hex")).toBe(bytes);
    expect(formatAddress(parsed.bytes)).toBe(canonical);
    expect(canonicalAddress(text)).toBe(canonical);
  });

  it.each([
    "",
    "1.2.3",
    "1.2.3.4.5",
    "01.2.3.4",
    "256.1.1.1",
    "1.2.3.4 ",
    "1:2:3:4:5:6:7:8:9",
    "1::2::3",
    "12345::",
    "fe80::1%eth0",
    "::1/128",
    "g::1",
    "1:2:3:4:5:6:7::8",
  ])("rejects %j", (text) => {
    expect(() => parseAddress(text)).toThrow(AddressError);
  });

  it("parses CIDRs and defaults to a full prefix", () => {
    expect(parseCidr("203.0.113.64/26").prefixBits).toBe(26);
    expect(parseCidr("2001:db8::10").prefixBits).toBe(128);
    expect(() => parseCidr("10.0.0.0/33")).toThrow(/prefix/);
    expect(() => parseCidr("10.0.0.0/")).toThrow(/prefix/);
  });

  it("parses endpoints with and without ports", () => {
    expect(parseEndpoint("10.0.0.1:443")).toEqual({ address: "10.0.0.1", port: 443 });
    expect(parseEndpoint("10.0.0.1")).toEqual({ address: "10.0.0.1" });
    expect(parseEndpoint("[2001:DB8::1]:53")).toEqual({ address: "2001:db8::1", port: 53 });
    expect(parseEndpoint("2001:db8::1")).toEqual({ address: "2001:db8::1" });
    expect(() => parseEndpoint("10.0.0.1:65536")).toThrow(/port/);
    expect(() => parseEndpoint("[10.0.0.1]:80")).toThrow(/IPv6/);
  });
});
