import { httpEnv } from "../env";
import { RequestRefusal } from "./limits";

/**
 * Admission of agent batches (POST /api/v1/agent/observations) in one console process.
 *
 * A console that takes more batches than it can work on does not get slower gracefully: each
 * batch waits behind all the others in the event loop, agents time out (10 s) and resend, and the
 * work done for a batch whose agent gave up is thrown away; at 1,000 agents on one 2-core console
 * this collapsed to a third of its capacity with thousands of timeouts. So a process works on at
 * most `limit` batches at once (TIDE_INGEST_MAX_IN_FLIGHT) and answers the next ones 503 busy with
 * Retry-After at once, before reading their bodies. An agent keeps a refused batch (console-link.ts:
 * it buffers, backs off, moves to its next console URL if it has one) and sends it later, merged
 * with the samples taken meanwhile: nothing is lost, and the batches it does take are answered in
 * about limit / throughput.
 *
 * The reply's batchIntervalMs (ingest-pacing.ts) asks agents to batch before it comes to this.
 */
export class IngestAdmission {
  private inFlight = 0;
  /** Batches refused since the process started. */
  refused = 0;

  constructor(readonly limit: number) {}

  /** Batches being worked on now. */
  get active(): number {
    return this.inFlight;
  }

  /** Take a slot, or a refusal to send (the slot must be given back with leave()). */
  enter(): RequestRefusal | null {
    if (this.inFlight >= this.limit) {
      this.refused++;
      return new RequestRefusal(
        "busy",
        `The console is busy: it is working on ${this.inFlight} agent batches (TIDE_INGEST_MAX_IN_FLIGHT). Keep this batch and retry after the Retry-After header's seconds.`,
      );
    }
    this.inFlight++;
    return null;
  }

  leave(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
  }
}

let shared: IngestAdmission | undefined;

/** This process's admission (limit from TIDE_INGEST_MAX_IN_FLIGHT). */
export function ingestAdmission(): IngestAdmission {
  shared ??= new IngestAdmission(httpEnv().TIDE_INGEST_MAX_IN_FLIGHT);
  return shared;
}
