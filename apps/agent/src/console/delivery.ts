import { AgentSamplesDropped } from "@tide/contracts";

/**
 * What the agent does when a batch does not go through (issue 11 item 6). A console that refused
 * what was sent is not an unreachable console: resending the same batch forever blocks every
 * sample queued behind it.
 *
 *  - unreachable: no answer, a timeout or a 5xx, and also 404 (wrong consoleUrl, or a console
 *    that is not up yet), 408 and 429 (the console asks to come back later): keep the samples,
 *    back off, retry;
 *  - token: 401 or 403, the host token is wrong, revoked or for another host: keep the samples
 *    and say so (an operator fixes the token; nothing is lost meanwhile);
 *  - refused: any other 4xx (400 invalid, 413 too large, 422 ...): the console will never take
 *    this batch as it is. A batch of several samples is split in half until the refused sample is
 *    alone; a lone refused sample is dropped, logged and counted, and the rest go on.
 */
export type DeliveryFailure = "unreachable" | "token" | "refused";

/** `status`: the HTTP status of the console's answer, or null when there was none. */
export function deliveryFailure(status: number | null): DeliveryFailure {
  if (status === null || status >= 500 || status < 400) return "unreachable";
  if (status === 401 || status === 403) return "token";
  if (status === 404 || status === 408 || status === 429) return "unreachable";
  return "refused";
}

/**
 * Why samples left the buffer without being stored (tide_agent_samples_dropped_total{reason}, and
 * AgentObservationsIn.dropped): the buffer's bound, refused by the console (alone, 4xx), refused as
 * in_future / too_old in a delivered batch, or a spool line that could not be read back.
 */
export const DROP_REASONS = AgentSamplesDropped.keyof().options;
export type DropReason = (typeof DROP_REASONS)[number];

/**
 * One log line per `key` per `intervalMs` at most, then the count of lines held back: a console
 * that refuses every sample must not fill the journal at one line a second.
 */
export class ThrottledLog {
  private readonly last = new Map<string, { at: number; held: number }>();

  constructor(
    private readonly log: (line: string) => void,
    private readonly intervalMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  say(key: string, line: string): void {
    const t = this.now();
    const l = this.last.get(key);
    if (l !== undefined && t - l.at < this.intervalMs) {
      l.held++;
      return;
    }
    const held = l?.held ?? 0;
    this.log(held > 0 ? `${line} (and ${held} more like it since the last such line)` : line);
    this.last.set(key, { at: t, held: 0 });
  }
}
