/** Retry delays: doubling from 1 s to 60 s, with up to 20 % jitter so a fleet does not retry in step. */
export const BACKOFF_MIN_MS = 1_000;
export const BACKOFF_MAX_MS = 60_000;

export function backoffMs(failures: number, random: () => number = Math.random): number {
  if (failures <= 0) return 0;
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** (failures - 1));
  return Math.round(base * (1 + 0.2 * random()));
}

/**
 * Longest a console's Retry-After holds this agent back, ms: as long as the longest backoff, so a
 * wrong header (a day) cannot stall an agent that would otherwise have tried again within a minute.
 */
export const RETRY_AFTER_MAX_MS = BACKOFF_MAX_MS;

/** The wait before the next attempt, ms: the backoff, or the console's Retry-After when longer (bounded). */
export function retryWaitMs(backoff: number, retryAfterMs: number | null): number {
  return Math.max(backoff, Math.min(retryAfterMs ?? 0, RETRY_AFTER_MAX_MS));
}
