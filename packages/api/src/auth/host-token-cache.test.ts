import { describe, expect, it } from "vitest";
import { HostTokenCache } from "./host-token-cache";
import type { HostCaller } from "./actor";

const caller = (n: number): HostCaller => ({
  hostId: `host_${n}`,
  hostname: `lb-${n}`,
  tokenId: `htk_${n}`,
  label: `host lb-${n} (htk_${n})`,
});

function clocked(ttlMs = 5_000, max = 100) {
  let now = 1_000_000;
  const cache = new HostTokenCache(ttlMs, max, () => now);
  return { cache, advance: (ms: number) => (now += ms) };
}

describe("HostTokenCache", () => {
  it("answers a resolved token until its TTL, then sends the caller back to the database", () => {
    const { cache, advance } = clocked(5_000);
    expect(cache.get("d1")).toBeUndefined();
    cache.set("d1", caller(1));
    expect(cache.get("d1")).toEqual(caller(1));
    advance(4_999);
    expect(cache.get("d1")).toEqual(caller(1));
    advance(1);
    expect(cache.get("d1")).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("forgets a revoked token at once and never caches it again", () => {
    const { cache } = clocked();
    cache.set("d1", caller(1));
    cache.set("d2", caller(2));
    cache.evictToken("htk_1");
    expect(cache.get("d1")).toBeUndefined();
    expect(cache.get("d2")).toEqual(caller(2));
    // A database read that began before the revocation committed must not put it back.
    cache.set("d1", caller(1));
    expect(cache.get("d1")).toBeUndefined();
  });

  it("keeps at most `max` tokens, dropping the oldest", () => {
    const { cache } = clocked(5_000, 2);
    cache.set("d1", caller(1));
    cache.set("d2", caller(2));
    cache.set("d3", caller(3));
    expect(cache.size).toBe(2);
    expect(cache.get("d1")).toBeUndefined();
    expect(cache.get("d3")).toEqual(caller(3));
  });
});
