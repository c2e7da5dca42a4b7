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
import { AUTH_LOST, AUTH_RECONNECTED } from "../live/host-live";

/** Longest an entry is trusted without reading the database, ms (notifications end it sooner). */
export const API_TOKEN_CACHE_TTL_MS = 60_000;
/** Tokens kept at most (the least recently resolved goes first). */
export const API_TOKEN_CACHE_MAX = 10_000;
/** After the LISTEN subscription failed, wait this long before trying again, ms. */
const LISTEN_RETRY_MS = 10_000;

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

/** Subscribes to AUTH_CHANNEL changes; resolves once listening. */
type Listen = (onChange: (change: string) => void) => Promise<() => void>;

export class ApiTokenCache {
  /** sha256 of the token -> what it resolved to (insertion order = age). */
  private readonly byDigest = new Map<string, Entry>();
  /** Bumped by every change: a read that began under an older generation is not kept. */
  private generation = 0;
  /** "lost": subscribed, but the connection broke; the listener reconnects by itself. */
  private state: "no" | "connecting" | "yes" | "lost" = "no";
  private retryAt = 0;

  constructor(
    private readonly listen: Listen,
    private readonly ttlMs = API_TOKEN_CACHE_TTL_MS,
    private readonly max = API_TOKEN_CACHE_MAX,
    private readonly now: () => number = Date.now,
  ) {}

  /** What the token resolved to, if trusted now; undefined: read the database. */
  get(digest: string): CachedToken | undefined {
    this.ensureListening();
    if (this.state !== "yes") return undefined;
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
    return this.generation;
  }

  /** Remember what the database said at `generation` (begin()), unless something changed since. */
  set(digest: string, token: CachedToken, generation: number): void {
    if (this.state !== "yes" || generation !== this.generation) return;
    this.byDigest.delete(digest);
    if (this.byDigest.size >= this.max) {
      const oldest = this.byDigest.keys().next();
      if (!oldest.done) this.byDigest.delete(oldest.value);
    }
    this.byDigest.set(digest, { ...token, cachedUntil: this.now() + this.ttlMs });
  }

  /** Forget a token, or every token of a user: it changed (revoked, rescoped, its user changed). */
  evict(kind: "token" | "user", id: string): void {
    this.generation++;
    for (const [digest, e] of this.byDigest) {
      if ((kind === "token" ? e.tokenId : e.userId) === id) this.byDigest.delete(digest);
    }
  }

  /** Forget everything. */
  clear(): void {
    this.generation++;
    this.byDigest.clear();
  }

  /** An AUTH_CHANNEL payload, or the connection's state (AUTH_LOST, AUTH_RECONNECTED). */
  changed(change: string): void {
    if (change === AUTH_LOST) {
      this.state = "lost";
      this.clear();
      return;
    }
    if (change === AUTH_RECONNECTED) {
      this.clear();
      this.state = "yes";
      return;
    }
    const colon = change.indexOf(":");
    const kind = colon < 0 ? change : change.slice(0, colon);
    const id = change.slice(colon + 1);
    if (kind === "token" || kind === "user") this.evict(kind, id);
    else if (kind !== "host-token") this.clear(); // "all", or a payload this version does not know
  }

  get size(): number {
    return this.byDigest.size;
  }

  /** Whether entries are trusted now (the LISTEN is in place). */
  get trusting(): boolean {
    return this.state === "yes";
  }

  private ensureListening(): void {
    if (this.state !== "no" || this.now() < this.retryAt) return;
    this.state = "connecting";
    this.listen((change) => this.changed(change)).then(
      () => {
        // Whatever changed before the subscription was made is in no entry: there are none yet.
        this.clear();
        if (this.state === "connecting") this.state = "yes";
      },
      (e: unknown) => {
        this.state = "no";
        this.retryAt = this.now() + LISTEN_RETRY_MS;
        console.error("API token cache: LISTEN failed; reading every token from the database for now", e);
      },
    );
  }
}
