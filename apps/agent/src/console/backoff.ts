/** Retry delays: doubling from 1 s to 60 s, with up to 20 % jitter so a fleet does not retry in step. */
export const BACKOFF_MIN_MS = 1_000;
export const BACKOFF_MAX_MS = 60_000;

export function backoffMs(failures: number, random: () => number = Math.random): number {
  if (failures <= 0) return 0;
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** (failures - 1));
  return Math.round(base * (1 + 0.2 * random()));
}
