/**
 * Which console the agent sends to when it is given several (consoleUrls; issue 16: more than one
 * console process on one database, agents fail over). Pure: ConsoleLink says what each attempt did.
 *
 *  - sticky: the agent keeps using the console that answers, however long, until it fails;
 *  - an attempt that finds the console unreachable (delivery.ts: no answer, a timeout, a 5xx, 404,
 *    408, 429) moves to the next URL of the list, round-robin, for the next attempt;
 *  - any other failure (401/403: the host token) is no outage: the agent stays where it is;
 *  - backoff: one step per full cycle of the list, not per attempt. The first attempt on each
 *    console of a cycle waits the same delay (1 s, then 2 s, 4 s ... up to 60 s, backoff.ts), so a
 *    dead first console delays the second by one step only, and every console is still asked at
 *    most once per delay: with all of them down an agent makes one attempt per delay, as with one.
 *    With a single URL this is exactly the backoff of one console (one step per attempt).
 */
export class ConsoleUrls {
  private index = 0;
  /** Failed attempts since the last answer, on any console. */
  private failures = 0;

  constructor(readonly urls: readonly string[]) {
    if (urls.length === 0) throw new Error("ConsoleUrls: no console URL");
  }

  /** The console to send to. */
  get current(): string {
    return this.urls[this.index]!;
  }

  /** Backoff step (backoffMs's `failures`) before the next attempt: 0 = none. */
  get backoffStep(): number {
    return Math.ceil(this.failures / this.urls.length);
  }

  /** The current console answered: stay on it. */
  answered(): void {
    this.failures = 0;
  }

  /**
   * An attempt on the current console found it unreachable: the next attempt goes to the next URL.
   * Returns the switch, or null with a single URL.
   */
  unreachable(): { from: string; to: string } | null {
    this.failures++;
    if (this.urls.length === 1) return null;
    const from = this.current;
    this.index = (this.index + 1) % this.urls.length;
    return { from, to: this.current };
  }

  /** An attempt failed without an outage (the token): stay, and back off one whole step. */
  refused(): void {
    this.failures = (this.backoffStep + 1) * this.urls.length;
  }
}
