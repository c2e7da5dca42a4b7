import { describe, expect, it } from "vitest";
import { LISTEN_LOST, LISTEN_BACK } from "../live/host-live";
import type { Actor } from "./actor";
import { ApiTokenCache, type CachedToken } from "./auth-cache";

function token(tokenId: string, userId: string, tokenExpiresAt: number | null = null): CachedToken {
  const actor: Actor = {
    kind: "token",
    userId,
    email: `${userId}@test.local`,
    name: userId,
    role: "operator",
    tokenId,
    label: `token ${tokenId}`,
    scopes: ["read", "operate"],
  };
  return { actor, tokenId, userId, tokenExpiresAt, lastUsedAt: null };
}

/** A cache whose LISTEN is under the test's control, on a clock the test moves. */
function setup(ttlMs = 60_000, max = 100) {
  let clock = 1_000_000;
  let notify: (change: string) => void = () => undefined;
  let resolveListen: () => void = () => undefined;
  let rejectListen: (e: Error) => void = () => undefined;
  let listens = 0;
  const cache = new ApiTokenCache(
    (onChange) => {
      listens++;
      notify = onChange;
      return new Promise((resolve, reject) => {
        resolveListen = () => resolve(() => undefined);
        rejectListen = reject;
      });
    },
    ttlMs,
    max,
    () => clock,
  );
  return {
    cache,
    notify: (c: string) => notify(c),
    listening: async () => {
      if (listens === 0) cache.get("none"); // the first lookup subscribes
      resolveListen();
      await Promise.resolve();
      await Promise.resolve();
    },
    failListen: async () => {
      rejectListen(new Error("refused"));
      await Promise.resolve();
      await Promise.resolve();
    },
    advance: (ms: number) => (clock += ms),
    listens: () => listens,
  };
}

/** Resolve a token as actorFromToken does: get, else read (here: `t`) and set. */
function resolve(cache: ApiTokenCache, digest: string, t: CachedToken) {
  const hit = cache.get(digest);
  if (hit) return { hit: true, actor: hit.actor };
  cache.set(digest, t, cache.begin());
  return { hit: false, actor: t.actor };
}

describe("ApiTokenCache", () => {
  it("trusts nothing until the LISTEN is in place, then answers from memory", async () => {
    const s = setup();
    expect(resolve(s.cache, "d1", token("t1", "u1")).hit).toBe(false);
    expect(resolve(s.cache, "d1", token("t1", "u1")).hit).toBe(false);
    await s.listening();
    expect(s.cache.trusting).toBe(true);
    expect(resolve(s.cache, "d1", token("t1", "u1")).hit).toBe(false);
    expect(resolve(s.cache, "d1", token("t1", "u1")).hit).toBe(true);
    expect(s.listens()).toBe(1);
  });

  it("forgets a token when the database announces it, and only that token", async () => {
    const s = setup();
    await s.listening();
    resolve(s.cache, "d1", token("t1", "u1"));
    resolve(s.cache, "d2", token("t2", "u1"));
    resolve(s.cache, "d3", token("t3", "u2"));
    s.notify("token:t1");
    expect(s.cache.get("d1")).toBeUndefined();
    expect(s.cache.get("d2")?.tokenId).toBe("t2");
    s.notify("user:u1");
    expect(s.cache.get("d2")).toBeUndefined();
    expect(s.cache.get("d3")?.tokenId).toBe("t3");
    s.notify("host-token:h1"); // another cache's business
    expect(s.cache.get("d3")?.tokenId).toBe("t3");
    s.notify("all");
    expect(s.cache.size).toBe(0);
  });

  it("does not keep a read that began before a change", async () => {
    const s = setup();
    await s.listening();
    const generation = s.cache.begin();
    s.notify("token:t1"); // the revocation commits while the read is in flight
    s.cache.set("d1", token("t1", "u1"), generation);
    expect(s.cache.get("d1")).toBeUndefined();
    s.cache.set("d1", token("t1", "u1"), s.cache.begin());
    expect(s.cache.get("d1")?.tokenId).toBe("t1");
    s.cache.evict("user", "u1");
    expect(s.cache.get("d1")).toBeUndefined();
  });

  it("trusts nothing while the connection is lost, and starts empty when it is back", async () => {
    const s = setup();
    await s.listening();
    resolve(s.cache, "d1", token("t1", "u1"));
    s.notify(LISTEN_LOST);
    expect(s.cache.trusting).toBe(false);
    expect(resolve(s.cache, "d1", token("t1", "u1")).hit).toBe(false);
    expect(resolve(s.cache, "d1", token("t1", "u1")).hit).toBe(false);
    expect(s.listens()).toBe(1); // the shared listener reconnects; no second subscription
    s.notify(LISTEN_BACK);
    expect(s.cache.size).toBe(0);
    resolve(s.cache, "d1", token("t1", "u1"));
    expect(resolve(s.cache, "d1", token("t1", "u1")).hit).toBe(true);
  });

  it("never outlives its token's expiry or its own TTL", async () => {
    const s = setup(60_000);
    await s.listening();
    resolve(s.cache, "d1", token("t1", "u1", 1_000_000 + 5_000));
    resolve(s.cache, "d2", token("t2", "u1"));
    s.advance(4_999);
    expect(s.cache.get("d1")).toBeDefined();
    s.advance(1);
    expect(s.cache.get("d1")).toBeUndefined();
    s.advance(54_999);
    expect(s.cache.get("d2")).toBeDefined();
    s.advance(1);
    expect(s.cache.get("d2")).toBeUndefined();
  });

  it("keeps at most `max` tokens, the oldest going first", async () => {
    const s = setup(60_000, 2);
    await s.listening();
    resolve(s.cache, "d1", token("t1", "u1"));
    resolve(s.cache, "d2", token("t2", "u1"));
    resolve(s.cache, "d3", token("t3", "u1"));
    expect(s.cache.size).toBe(2);
    expect(s.cache.get("d1")).toBeUndefined();
    expect(s.cache.get("d3")).toBeDefined();
  });

  it("reads every token from the database while the LISTEN fails, and tries again later", async () => {
    const s = setup();
    const logged = console.error;
    console.error = () => undefined;
    try {
      s.cache.get("d1");
      await s.failListen();
    } finally {
      console.error = logged;
    }
    expect(resolve(s.cache, "d1", token("t1", "u1")).hit).toBe(false);
    expect(resolve(s.cache, "d1", token("t1", "u1")).hit).toBe(false);
    expect(s.listens()).toBe(1);
    s.advance(10_000);
    s.cache.get("d1");
    expect(s.listens()).toBe(2);
    await s.listening();
    resolve(s.cache, "d1", token("t1", "u1"));
    expect(resolve(s.cache, "d1", token("t1", "u1")).hit).toBe(true);
  });
});
