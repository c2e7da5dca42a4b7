/**
 * API tokens resolved recently, in this process's memory. Every REST call of a runbook presents
 * its token, and resolving it (sha256, a Prisma query joining the token's creator, compiled in
 * WebAssembly on the event loop, and a round trip) was most of the CPU of a GET /api/v1/me and a
 * good part of every other read (issue 28).
 *
 * Revocation is honoured at once, in every console process: the database announces every change
 * to what a token acts with (AUTH_CHANNEL, notified by triggers of migration auth_notify: a token
 * revoked, expired or rescoped; its user's role changed, disabled or removed; any writer, any
 * process), and an entry is forgotten the moment its notification arrives. The console that made
 * the change also forgets it before it answers (evict), so its own next request never depends on
 * the notification's delivery. Nothing is cached while the LISTEN connection is not in place
 * (before it is made, after it broke, until it is back): every request then reads the database, as
 * before. A read that began before a change is not kept (generation), so an answer from before a
 * revocation cannot outlive it. The TTL only bounds how long an entry lives without any use of
 * the token table (its last-used time is still written once a minute).
 */
import type { Actor } from "./actor";
import { ListenGate, type Listen } from "../live/listen-gate";

/** Longest an entry is trusted without reading the database, ms (notifications end it sooner). */
export const API_TOKEN_CACHE_TTL_MS = 60_000;
/** Tokens kept at most (the least recently resolved goes first). */
export const API_TOKEN_CACHE_MAX = 10_000;

export interface CachedToken {
  actor: Actor;
  tokenId: string;
  userId: string;
  /** The token's own expiry (epoch ms), or null: an entry never outlives its token. */
  tokenExpiresAt: number | null;
  /** When the token's use was last recorded (epoch ms), or null. */
  lastUsedAt: number | null;
}

interface Entry extends CachedToken {
  cachedUntil: number;
}

export class ApiTokenCache {
  /** sha256 of the token -> what it resolved to (insertion order = age). */
  private readonly byDigest = new Map<string, Entry>();
  private readonly gate: ListenGate;

  constructor(
    listen: Listen,
    private readonly ttlMs = API_TOKEN_CACHE_TTL_MS,
    private readonly max = API_TOKEN_CACHE_MAX,
    private readonly now: () => number = Date.now,
  ) {
    this.gate = new ListenGate(
      listen,
      (payload) => this.payload(payload),
      () => this.byDigest.clear(),
      "API token cache",
      now,
    );
  }

  /** What the token resolved to, if trusted now; undefined: read the database. */
  get(digest: string): CachedToken | undefined {
    if (!this.gate.trusting) return undefined;
    const e = this.byDigest.get(digest);
    if (!e) return undefined;
    const now = this.now();
    if (now >= e.cachedUntil || (e.tokenExpiresAt !== null && now >= e.tokenExpiresAt)) {
      this.byDigest.delete(digest);
      return undefined;
    }
    return e;
  }

  /** Call before reading the database; pass the result to set(). */
  begin(): number {
    return this.gate.begin();
  }

  /** Remember what the database said at `generation` (begin()), unless something changed since. */
  set(digest: string, token: CachedToken, generation: number): void {
    if (!this.gate.mayKeep(generation)) return;
    this.byDigest.delete(digest);
    if (this.byDigest.size >= this.max) {
      const oldest = this.byDigest.keys().next();
      if (!oldest.done) this.byDigest.delete(oldest.value);
    }
    this.byDigest.set(digest, { ...token, cachedUntil: this.now() + this.ttlMs });
  }

  /** Forget a token, or every token of a user: it changed (revoked, rescoped, its user changed). */
  evict(kind: "token" | "user", id: string): void {
    this.gate.changed();
    for (const [digest, e] of this.byDigest) {
      if ((kind === "token" ? e.tokenId : e.userId) === id) this.byDigest.delete(digest);
    }
  }

  /** An AUTH_CHANNEL payload, or the connection's state (LISTEN_LOST, LISTEN_BACK). */
  changed(change: string): void {
    this.gate.signal(change);
  }

  get size(): number {
    return this.byDigest.size;
  }

  /** Whether entries are trusted now (the LISTEN is in place). */
  get trusting(): boolean {
    return this.gate.trusting;
  }

  private payload(change: string): void {
    const colon = change.indexOf(":");
    const kind = colon < 0 ? change : change.slice(0, colon);
    const id = change.slice(colon + 1);
    if (kind === "token" || kind === "user") this.evict(kind, id);
    else if (kind !== "host-token") this.byDigest.clear(); // "all", or a payload this version does not know
  }
}
