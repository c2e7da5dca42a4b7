/**
 * When a hash-field migration may end by itself (pure). While a pool migrates, its tables carry
 * the old fields as alt_hash_fields and tide-redirect counts the packets it accepts because they
 * came through that alternate row (accepted_alternate_hash, per VIP). Once no such packet arrived
 * on any of the pool's proxies for a whole quiet window, no established flow needs the old fields
 * any more, and dropping them resets nothing.
 */

/** A migration lasts at least this long, so late retransmits and idle keep-alives get their chance. */
export const HASH_MIGRATION_MIN_MS = 60_000;
/** No packet through the alternate hash for this long, on every proxy that may hold flows (not inactive), ends it. */
export const HASH_MIGRATION_QUIET_MS = 30_000;

/** What the pool's proxies reported over the quiet window (proxy-traffic.service's answer). */
export interface AlternateHashActivity {
  /** Packets/s accepted through the alternate hash on the pool's VIPs; null = no report. */
  acceptedAlternateHashPerS: number | null;
  /** Proxies not inactive (they may hold flows) whose host reported VIP counters over the whole window. */
  reportingProxies: number;
  /** Proxies not inactive. */
  proxies: number;
}

export type AutoFinish =
  | { finish: true; why: string }
  | { finish: false; why: string; /** ms until it could, when only time is missing */ waitMs?: number };

export function planAutoFinish(input: {
  startedAt: Date;
  now: Date;
  activity: AlternateHashActivity;
}): AutoFinish {
  const age = input.now.getTime() - input.startedAt.getTime();
  if (age < HASH_MIGRATION_MIN_MS) {
    return {
      finish: false,
      why: "younger than the minimum migration time",
      waitMs: HASH_MIGRATION_MIN_MS - age,
    };
  }
  const a = input.activity;
  if (a.proxies === 0) return { finish: false, why: "no proxy in rotation" };
  if (a.reportingProxies < a.proxies || a.acceptedAlternateHashPerS === null) {
    // An old agent, a silent host, or a module without the counter: only an operator can tell.
    return {
      finish: false,
      why: `${a.reportingProxies}/${a.proxies} proxies report alternate-hash counters`,
    };
  }
  if (a.acceptedAlternateHashPerS > 0) {
    return {
      finish: false,
      why: `${a.acceptedAlternateHashPerS.toFixed(1)} packets/s still reach their proxy by the old fields`,
    };
  }
  return {
    finish: true,
    why: `no packet reached a proxy by the old fields for ${Math.round(HASH_MIGRATION_QUIET_MS / 1000)} s on ${a.proxies}/${a.proxies} proxies`,
  };
}
