/**
 * How often this console asks its agents to send (AgentObservationsReply.batchIntervalMs). Agents
 * sample every second; sending each sample alone costs the console a whole request (HTTP, token,
 * validation, one storeBatch round trip, a notify, the desired revision) per sample, and a single
 * console process measured ~60 such requests/s before it fell behind (issue 16). Batching several
 * samples per request costs only freshness: live pages and findings trail by the batch interval.
 *
 * So the interval grows with the agents this process serves: each agent is asked to send every
 * ceil(activeHosts / INGEST_BATCHES_PER_S) seconds, at least every sample (1 s) and at most every
 * BATCH_INTERVAL_MAX_MS. A fleet of up to INGEST_BATCHES_PER_S agents keeps one sample per batch;
 * 1,000 agents send every 10 s. Counted per process: with several consoles each paces its own.
 */
import { AGENT_BATCH_INTERVAL_MAX_MS } from "@tide/contracts";
import { DESIRED_SAMPLE_INTERVAL_MS } from "../fleet/desired-state.service";

/**
 * Agent batches per second one console process is sized for. Measured in-process (issue 16): a
 * batch costs ~6 ms of the console's CPU before its samples (HTTP, validation, storeBatch, notify)
 * and ~0.5 ms per sample, so at 1,000 samples/s the samples alone take half a core; 100 batches/s
 * leaves the rest to findings evaluation and PostgreSQL on the same 2-core machine.
 */
export const INGEST_BATCHES_PER_S = 100;
/** Longest interval asked, ms: live pages and findings trail by at most this (plus one sample). */
export const BATCH_INTERVAL_MAX_MS = Math.min(10_000, AGENT_BATCH_INTERVAL_MAX_MS);
/** An agent counts as active for this long after its last batch, ms. */
export const ACTIVE_AGENT_MS = 60_000;

/** The batch interval for `activeHosts` agents on one process, ms: whole sample intervals. */
export function batchIntervalFor(activeHosts: number): number {
  const samples = Math.max(1, Math.ceil(activeHosts / INGEST_BATCHES_PER_S));
  return Math.min(BATCH_INTERVAL_MAX_MS, samples * DESIRED_SAMPLE_INTERVAL_MS);
}

/** Agents that sent a batch to this process within ACTIVE_AGENT_MS, and the interval they get. */
export class IngestPacer {
  private readonly lastBatch = new Map<string, number>();
  private nextSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** A batch of `hostId` arrived: the interval to ask of it, ms (0: one sample per batch). */
  batchArrived(hostId: string): number {
    const now = this.now();
    this.lastBatch.set(hostId, now);
    if (now >= this.nextSweep) {
      for (const [id, at] of this.lastBatch) if (now - at > ACTIVE_AGENT_MS) this.lastBatch.delete(id);
      this.nextSweep = now + ACTIVE_AGENT_MS / 4;
    }
    const ms = batchIntervalFor(this.lastBatch.size);
    return ms <= DESIRED_SAMPLE_INTERVAL_MS ? 0 : ms;
  }

  get activeHosts(): number {
    return this.lastBatch.size;
  }
}

let shared: IngestPacer | undefined;

/** This process's pacer. */
export function ingestPacer(): IngestPacer {
  shared ??= new IngestPacer();
  return shared;
}
