import type { Observation } from "@tide/contracts";
import type { Db, WindowShape } from "@tide/db";
import { ingestEnv } from "../../env";

/**
 * The evaluation windows of the hosts this console process ingests, in memory: the samples of each
 * host's last `seconds` before its newest, as ingest parsed and validated them.
 *
 * Reading a window back from PostgreSQL was most of an evaluation's cost (a minute of ~5 kB jsonb
 * payloads sent, converted and parsed, every EVALUATION_INTERVAL_MS per host: ~3-5 ms of the
 * console's CPU, against ~1.5 ms for diagnose() itself). The evaluation instead asks the database
 * for the window's shape (newest sample and count, from the index) and uses the cached samples
 * when they match it; it reads the window as before when they do not (another console process
 * stored some of the host's samples, this process restarted, the host went quiet and its samples
 * were compacted, the cache had no room) and caches what it read.
 *
 * Bounded: at most `maxSamples` samples in all (TIDE_EVALUATION_CACHE_SAMPLES; a sample of a host
 * with a few namespaces is ~5 kB of heap), the least recently used host dropped first. The cached
 * Observations are shared with diagnose(), which does not change its input.
 */
export class EvaluationWindowCache {
  /** Per host, oldest first; Map order is least recently used first. */
  private readonly hosts = new Map<string, { t: number; o: Observation }[]>();
  private total = 0;

  constructor(
    private readonly seconds: number,
    private readonly maxSamples: number,
  ) {}

  /** Samples cached in all (tests, stats). */
  get size(): number {
    return this.total;
  }

  /** Whether the host has a cached window (worth checking its shape). */
  has(hostId: string): boolean {
    return this.hosts.has(hostId);
  }

  /** Samples of the host that were just stored (in any order; instants already cached are kept). */
  add(hostId: string, stored: readonly Observation[]): void {
    if (stored.length === 0 || this.maxSamples === 0) return;
    const samples = this.take(hostId) ?? [];
    for (const o of stored) insert(samples, { t: Date.parse(o.sampledAt), o });
    this.put(hostId, samples);
  }

  /** Replace the host's window with what the database holds (oldest first). */
  fill(hostId: string, window: readonly { sampledAt: Date; payload: unknown }[]): void {
    this.take(hostId);
    if (this.maxSamples === 0) return;
    this.put(
      hostId,
      window.map((s) => ({ t: s.sampledAt.getTime(), o: s.payload as Observation })),
    );
  }

  /**
   * The host's window when it is the database's (`shape`): same newest sample, same count in the
   * same span, nothing compacted in it. Every cached sample was stored (ingest adds only what it
   * stored), so equal counts over equal spans are equal sets. Null otherwise.
   */
  window(hostId: string, shape: WindowShape): Observation[] | null {
    const samples = this.hosts.get(hostId);
    if (!samples || shape.newest === null || shape.chunked) return null;
    if (samples.length !== shape.count || samples.at(-1)?.t !== shape.newest.getTime()) return null;
    this.hosts.delete(hostId);
    this.hosts.set(hostId, samples);
    return samples.map((s) => s.o);
  }

  /** Forget the host (its findings were deleted, tests). */
  drop(hostId: string): void {
    this.take(hostId);
  }

  private take(hostId: string) {
    const samples = this.hosts.get(hostId);
    if (samples) {
      this.hosts.delete(hostId);
      this.total -= samples.length;
    }
    return samples;
  }

  /** Keep the samples of the host's window (trimmed), as the most recently used; evict to fit. */
  private put(hostId: string, samples: { t: number; o: Observation }[]): void {
    const newest = samples.at(-1)?.t;
    if (newest === undefined) return;
    const from = newest - this.seconds * 1000;
    let drop = 0;
    while (drop < samples.length && samples[drop]!.t < from) drop++;
    if (drop > 0) samples.splice(0, drop);
    this.hosts.set(hostId, samples);
    this.total += samples.length;
    for (const [id, s] of this.hosts) {
      if (this.total <= this.maxSamples) break;
      this.hosts.delete(id);
      this.total -= s.length;
    }
  }
}

/** Insert in time order (usually at the end); an instant already there keeps its sample. */
function insert(samples: { t: number; o: Observation }[], s: { t: number; o: Observation }): void {
  let i = samples.length;
  while (i > 0 && samples[i - 1]!.t > s.t) i--;
  if (i > 0 && samples[i - 1]!.t === s.t) return;
  samples.splice(i, 0, s);
}

const caches = new WeakMap<Db, EvaluationWindowCache>();

/** This process's cache for `db` (ingest adds to it, host-evaluation.ts reads it). */
export function evaluationWindowCacheFor(db: Db, seconds: number): EvaluationWindowCache {
  let c = caches.get(db);
  if (!c) {
    c = new EvaluationWindowCache(seconds, ingestEnv().TIDE_EVALUATION_CACHE_SAMPLES);
    caches.set(db, c);
  }
  return c;
}
