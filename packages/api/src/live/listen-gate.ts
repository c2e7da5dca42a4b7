import { LISTEN_BACK, LISTEN_LOST } from "./host-live";

/**
 * When a process-memory cache may trust what it holds: only while its LISTEN subscription is in
 * place (the database's notifications reach it), and only for reads that began after the last
 * change it heard (generation). Before the subscription is made, after the connection broke and
 * until it is back, nothing is trusted: every read goes to the database, as without a cache. Used
 * by the API token cache (auth/auth-cache.ts).
 */

/** Subscribes to a channel's payloads and to LISTEN_LOST / LISTEN_BACK; resolves once listening. */
export type Listen = (onChange: (change: string) => void) => Promise<() => void>;

/** After the LISTEN subscription failed, wait this long before trying again, ms. */
export const LISTEN_RETRY_MS = 10_000;

export class ListenGate {
  private generation = 0;
  /** "lost": subscribed, but the connection broke; the shared listener reconnects by itself. */
  private state: "no" | "connecting" | "yes" | "lost" = "no";
  private retryAt = 0;

  constructor(
    private readonly listen: Listen,
    /** A payload on the channel (not a connection state): forget what it names. */
    private readonly onPayload: (payload: string) => void,
    /** Forget everything: the connection was lost, is back, or the subscription was just made. */
    private readonly onReset: () => void,
    /** Names the cache in the log line of a failed subscription. */
    private readonly what: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether entries may be trusted now; subscribes on first use (and again after a failure). */
  get trusting(): boolean {
    this.ensureListening();
    return this.state === "yes";
  }

  /** Call before reading the database; pass the result to mayKeep(). */
  begin(): number {
    return this.generation;
  }

  /** Whether a read that began at `generation` (begin()) may be kept. */
  mayKeep(generation: number): boolean {
    return this.state === "yes" && generation === this.generation;
  }

  /** Something changed: reads in flight are not kept. */
  changed(): void {
    this.generation++;
  }

  /** A notification or a connection state (LISTEN_LOST, LISTEN_BACK). */
  signal(change: string): void {
    this.generation++;
    if (change === LISTEN_LOST) {
      this.state = "lost";
      this.onReset();
    } else if (change === LISTEN_BACK) {
      this.onReset();
      this.state = "yes";
    } else {
      this.onPayload(change);
    }
  }

  private ensureListening(): void {
    if (this.state !== "no" || this.now() < this.retryAt) return;
    this.state = "connecting";
    this.listen((change) => this.signal(change)).then(
      () => {
        // Whatever changed before the subscription was made is in no entry: reset all the same.
        this.generation++;
        this.onReset();
        if (this.state === "connecting") this.state = "yes";
      },
      (e: unknown) => {
        this.state = "no";
        this.retryAt = this.now() + LISTEN_RETRY_MS;
        console.error(`${this.what}: LISTEN failed; reading from the database every time for now`, e);
      },
    );
  }
}
