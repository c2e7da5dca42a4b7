/**
 * What an ingest reply needs from the desired state, per host, kept in this process's memory: the
 * host's desired revision (AgentObservationsReply.desiredRevision) and whether the host is a
 * registered director (only a director's batches are recorded by director sync). Read for every
 * batch, they took three queries (desiredStateFor: the host and its director; recordDirectorSync:
 * the director again), measured at ~3.4 ms of the console's CPU out of ~10 ms per batch of five
 * samples; they change when an operator changes something, not with the samples.
 *
 * An entry is kept until the database announces that anything a desired state is made of changed
 * (DESIRED_CHANNEL, notified by triggers on table versions, directors and their pools, pools and
 * hosts' PMTU targets; the long poll of /agent/desired wakes on the same notifications), and for at
 * most DESIRED_CACHE_TTL_MS in case one was missed. While the LISTEN connection cannot be made,
 * nothing is cached (every batch reads, as before). A read that began before a notification is not
 * kept, so a change is never hidden behind an answer from before it.
 */
import type { Db } from "@tide/db";
import { listenForDesiredChanges } from "../../live/host-live";
import { desiredStateFor } from "./desired-state.service";

/**
 * Longest an entry is trusted without a notification, ms: a safety net for a change no trigger
 * announced, not the way changes arrive. At 30 s, 1,000 agents made ~33 reads a second (three
 * Prisma queries each, ~10 % of a busy console's CPU) to find nothing had changed.
 */
export const DESIRED_CACHE_TTL_MS = 300_000;
/** After the LISTEN connection could not be made, wait this long before trying again, ms. */
const LISTEN_RETRY_MS = 10_000;

export interface HostDesiredFacts {
  revision: number;
  /** A director row exists for the host's name. */
  director: boolean;
}

type Load = (hostId: string, hostname: string) => Promise<HostDesiredFacts>;
type Listen = (onChange: () => void) => Promise<() => void>;

export class DesiredRevisionCache {
  private readonly entries = new Map<string, { facts: HostDesiredFacts; at: number }>();
  /** Bumped by every notification: a read that began under an older generation is not kept. */
  private generation = 0;
  private listening: "no" | "connecting" | "yes" = "no";
  private retryAt = 0;

  constructor(
    private readonly load: Load,
    private readonly listen: Listen,
    private readonly ttlMs = DESIRED_CACHE_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  async get(hostId: string, hostname: string): Promise<HostDesiredFacts> {
    this.ensureListening();
    const e = this.entries.get(hostId);
    if (e && this.listening === "yes" && this.now() - e.at < this.ttlMs) return e.facts;
    const generation = this.generation;
    const facts = await this.load(hostId, hostname);
    if (this.listening === "yes" && generation === this.generation)
      this.entries.set(hostId, { facts, at: this.now() });
    return facts;
  }

  /** Something a desired state is made of changed: every host reads again. */
  invalidate(): void {
    this.generation++;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private ensureListening(): void {
    if (this.listening !== "no" || this.now() < this.retryAt) return;
    this.listening = "connecting";
    this.listen(() => this.invalidate()).then(
      () => {
        // Whatever changed before the subscription was made is in no entry: there are none yet.
        this.invalidate();
        this.listening = "yes";
      },
      (e: unknown) => {
        this.listening = "no";
        this.retryAt = this.now() + LISTEN_RETRY_MS;
        console.error("desired revision cache: LISTEN failed; reading on every batch for now", e);
      },
    );
  }
}

const caches = new WeakMap<Db, DesiredRevisionCache>();

/** This process's cache for `db` (notifications come over the process's shared LISTEN connection). */
export function desiredRevisionCacheFor(db: Db): DesiredRevisionCache {
  let c = caches.get(db);
  if (!c) {
    c = new DesiredRevisionCache(async (hostId, hostname) => {
      const [desired, director] = await Promise.all([
        desiredStateFor(db, hostId),
        db.director.findUnique({ where: { hostname }, select: { id: true } }),
      ]);
      return { revision: desired.revision, director: director !== null };
    }, listenForDesiredChanges);
    caches.set(db, c);
  }
  return c;
}
