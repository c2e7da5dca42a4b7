import { httpEnv } from "../env";
import { RequestRefusal } from "./limits";

/**
 * Admission of agent batches (POST /api/v1/agent/observations) in one console process.
 *
 * A console that takes more batches than it can work on does not get slower gracefully: each
 * batch waits behind all the others in the event loop, agents time out (10 s) and resend, and the
 * work done for a batch whose agent gave up is thrown away; at 1,000 agents on one 2-core console
 * this collapsed to a third of its capacity with thousands of timeouts. So a process works on at
 * most `limit` batches at once (TIDE_INGEST_MAX_IN_FLIGHT) and at most `maxBytes` of their bodies
 * (TIDE_INGEST_MAX_BYTES_IN_FLIGHT), and answers the next ones 503 busy with Retry-After at once,
 * before reading their bodies. The bytes matter when agents replay a backlog: a replayed batch is
 * up to 4 MiB where a live one is a few kB, and 16 replayed batches at once (64 MiB of JSON) each
 * took longer than the agents' 10 s limit (issue 27: 82 of 204 POSTs of 20 replaying agents timed
 * out). One batch is admitted whenever none is in flight, whatever its size, so a batch larger than
 * the budget still gets through. A batch counts its Content-Length (agents always send one); one
 * without is counted at `unknownBytes` (the route's body cap).
 *
 * An agent keeps a refused batch (console-link.ts: it buffers, backs off, moves to its next console
 * URL if it has one) and sends it later, merged with the samples taken meanwhile: nothing is lost,
 * and the batches it does take are answered in about the budget / throughput.
 *
 * The reply's batchIntervalMs (ingest-pacing.ts) asks agents to batch before it comes to this.
 */
export class IngestAdmission {
  private inFlight = 0;
  private inFlightBytes = 0;
  /** Batches refused since the process started. */
  refused = 0;

  constructor(
    readonly limit: number,
    readonly maxBytes: number = Number.POSITIVE_INFINITY,
  ) {}

  /** Batches being worked on now. */
  get active(): number {
    return this.inFlight;
  }

  /** Body bytes of the batches being worked on now. */
  get activeBytes(): number {
    return this.inFlightBytes;
  }

  /**
   * Take a slot for a batch of `bytes` (its Content-Length), or a refusal to send; the slot must
   * be given back with leave(bytes), the same bytes.
   */
  enter(bytes = 0): RequestRefusal | null {
    const overCount = this.inFlight >= this.limit;
    const overBytes = this.inFlight > 0 && this.inFlightBytes + bytes > this.maxBytes;
    if (overCount || overBytes) {
      this.refused++;
      return new RequestRefusal(
        "busy",
        overCount
          ? `The console is busy: it is working on ${this.inFlight} agent batches (TIDE_INGEST_MAX_IN_FLIGHT). Keep this batch and retry after the Retry-After header's seconds.`
          : `The console is busy: it is working on ${mib(this.inFlightBytes)} of agent batches and this one (${mib(bytes)}) would pass its ${mib(this.maxBytes)} (TIDE_INGEST_MAX_BYTES_IN_FLIGHT). Keep this batch and retry after the Retry-After header's seconds.`,
      );
    }
    this.inFlight++;
    this.inFlightBytes += bytes;
    return null;
  }

  leave(bytes = 0): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.inFlightBytes = Math.max(0, this.inFlightBytes - bytes);
  }
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * The bytes a batch request counts for: its Content-Length, or `unknownBytes` when it has none
 * (chunked) or an unreadable one. Never above `unknownBytes` (a larger body is refused 413 anyway).
 */
export function admissionBytesOf(headers: Headers, unknownBytes: number): number {
  const declared = headers.get("content-length");
  const n = declared === null ? Number.NaN : Number(declared);
  return Number.isSafeInteger(n) && n >= 0 ? Math.min(n, unknownBytes) : unknownBytes;
}

let shared: IngestAdmission | undefined;

/** This process's admission (TIDE_INGEST_MAX_IN_FLIGHT, TIDE_INGEST_MAX_BYTES_IN_FLIGHT). */
export function ingestAdmission(): IngestAdmission {
  const env = httpEnv();
  shared ??= new IngestAdmission(env.TIDE_INGEST_MAX_IN_FLIGHT, env.TIDE_INGEST_MAX_BYTES_IN_FLIGHT);
  return shared;
}
