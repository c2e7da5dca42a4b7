/**
 * Host tokens resolved recently, in this process's memory: every agent request is authenticated by
 * its host token, and at one batch a second per agent the lookup (sha256 + a round trip + Prisma's
 * query work) was one of the largest parts of an ingest request. A valid token is trusted from
 * memory for at most HOST_TOKEN_CACHE_TTL_MS, then read from the database again (which also sees a
 * revocation and records lastUsedAt).
 *
 * Revocation: revokeHostToken evicts the token here at once, so this process refuses it from the
 * next request; another console process (one database, several consoles) evicts it when the
 * database announces the revocation (AUTH_CHANNEL, migration auth_notify; host-tokens.service.ts
 * listens), and within HOST_TOKEN_CACHE_TTL_MS at the latest. Unknown and revoked tokens are never
 * cached (always a database read).
 */
import type { HostCaller } from "./actor";

/** How long a resolved token is trusted without reading the database, ms. */
export const HOST_TOKEN_CACHE_TTL_MS = 5_000;
/** Tokens kept at most (the oldest goes first); a fleet of this many agents stays in memory. */
export const HOST_TOKEN_CACHE_MAX = 20_000;

interface Entry {
  caller: HostCaller;
  expiresAt: number;
}

export class HostTokenCache {
  /** sha256 of the token -> what it resolved to (insertion order = age). */
  private readonly byDigest = new Map<string, Entry>();
  /**
   * Tokens revoked through this process: never cached again, even by a read that began before the
   * revocation committed and ends after it (revocations are few; a token stays revoked).
   */
  private readonly revoked = new Set<string>();

  constructor(
    private readonly ttlMs = HOST_TOKEN_CACHE_TTL_MS,
    private readonly max = HOST_TOKEN_CACHE_MAX,
    private readonly now: () => number = Date.now,
  ) {}

  /** The caller of a token resolved less than ttlMs ago, or undefined (read the database). */
  get(digest: string): HostCaller | undefined {
    const e = this.byDigest.get(digest);
    if (!e) return undefined;
    if (this.now() >= e.expiresAt) {
      this.byDigest.delete(digest);
      return undefined;
    }
    return e.caller;
  }

  /** Remember a token the database just said is valid. */
  set(digest: string, caller: HostCaller): void {
    if (this.revoked.has(caller.tokenId)) return;
    this.byDigest.delete(digest);
    if (this.byDigest.size >= this.max) {
      const oldest = this.byDigest.keys().next();
      if (!oldest.done) this.byDigest.delete(oldest.value);
    }
    this.byDigest.set(digest, { caller, expiresAt: this.now() + this.ttlMs });
  }

  /** Forget a token (revoked): its next request reads the database. */
  evictToken(tokenId: string): void {
    this.revoked.add(tokenId);
    for (const [digest, e] of this.byDigest) if (e.caller.tokenId === tokenId) this.byDigest.delete(digest);
  }

  /** Forget every token (their table was truncated): each reads the database again. */
  clear(): void {
    this.byDigest.clear();
  }

  get size(): number {
    return this.byDigest.size;
  }
}
