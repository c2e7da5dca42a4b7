import { FLAP_WINDOW_MS, HEALTH_VIEW_STALE_AFTER_MS, type HealthCheckOutcome } from "@tide/contracts";

/**
 * Whether a proxy is healthy, from the views of the directors that serve its pool (pure: the
 * service loads, this decides, the service writes). Rules, in order:
 *
 *  1. Pinned by an operator: the pin wins, whatever the checks say.
 *  2. Only fresh views count (reported within HEALTH_VIEW_STALE_AFTER_MS, with a verdict after
 *     rise/fall): a director whose agent went silent neither keeps a proxy down nor up.
 *     No fresh view: health stays as it is (no information is not a failure).
 *  3. A strict majority of the fresh views decides. A tie keeps the current health. Why: with two
 *     directors, one failing and one passing means the path from one director is broken, not the
 *     proxy (the other director reaches it through the same proxy-side decap); flipping on a tie
 *     would make the table depend on which report came last. The split shows on the pool page
 *     (each director's view), so the broken path is not hidden.
 *  4. Flapping is damped on the way back only: going unhealthy is immediate (traffic must leave a
 *     dead proxy at once), returning to healthy waits until the proxy has been unhealthy for
 *     RECOVER_HOLD_MS x 2^(flips in the last FLAP_WINDOW_MS), capped at RECOVER_HOLD_MAX_MS, so a
 *     proxy that keeps failing stays out longer each time. A held proxy is a fact of its own (the
 *     pool page says "held until …"), and the recovery that ends a hold says it was released from one.
 *
 * Failing open (every proxy of a pool unhealthy: built as if all were healthy, as GLB does) is the
 * table builder's (table.service.ts), so it holds for operators' changes too.
 */

export const RECOVER_HOLD_MS = 5_000;
export const RECOVER_HOLD_MAX_MS = 10 * 60_000;
export { FLAP_WINDOW_MS };

export interface DirectorView {
  director: string;
  /** After rise/fall on that director; null until it has seen enough rounds. */
  up: boolean | null;
  /** When `up` last changed on that director; null if it did not say. */
  since: Date | null;
  reportedAt: Date;
  checks: readonly HealthCheckOutcome[];
}

export interface ProxyHealthInput {
  proxyId: string;
  hostname: string;
  healthy: boolean;
  pinned: boolean | null;
  /** When health last changed (healthChangedAt). */
  changedAt: Date;
  /** Automatic health changes of this proxy in the last FLAP_WINDOW_MS. */
  recentFlips: number;
  views: readonly DirectorView[];
}

export interface HealthDecision {
  proxyId: string;
  healthy: boolean;
  /** In words, for the proxy's health reason, the table version and the audit event. */
  reason: string;
  /** The failing checks that made it unhealthy: "lab-director-1 gue: timeout after 1000 ms". */
  failing: string[];
  pinned: boolean;
  /**
   * A recovery that a hold kept waiting (its checks passed before the hold ended): when the hold
   * ended. Null for every other change.
   */
  releasedFromHold: Date | null;
}

/** A proxy that would recover but must wait (for the pool page: "held until …"). */
export interface HealthHold {
  proxyId: string;
  until: Date;
  /** The hold, ms after its last health change: recoverHoldMs(recentFlips). */
  holdMs: number;
  recentFlips: number;
  /** "up on 2 of 2 directors (dir-a, dir-b), held until 18:00:40Z: flapped 3 times in the last 10 min" */
  reason: string;
}

export function recoverHoldMs(recentFlips: number): number {
  return Math.min(RECOVER_HOLD_MAX_MS, RECOVER_HOLD_MS * 2 ** Math.min(recentFlips, 16));
}

/** "18:00:40Z": the hold's end as the console shows times (UTC). */
export const clockUtc = (t: Date): string => `${t.toISOString().slice(11, 19)}Z`;

/** "10 min", "90 s": a window or hold in words. */
export function durationWords(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}

/** "flapped once", "flapped 3 times": the automatic health changes that lengthen a hold. */
export const flappedWords = (flips: number): string =>
  flips === 1 ? "flapped once" : `flapped ${flips} times`;

export const isHold = (x: HealthDecision | HealthHold | null): x is HealthHold => x !== null && "until" in x;

/** The views that count now: fresh, with a verdict. */
export function freshViews(views: readonly DirectorView[], now: Date): DirectorView[] {
  return views.filter(
    (v) => v.up !== null && now.getTime() - v.reportedAt.getTime() <= HEALTH_VIEW_STALE_AFTER_MS,
  );
}

/** The failing checks of the views that say down, "director kind: detail". */
export function failingChecks(views: readonly DirectorView[]): string[] {
  return views
    .filter((v) => v.up === false)
    .flatMap((v) => v.checks.filter((c) => !c.ok).map((c) => `${v.director} ${c.kind}: ${c.detail}`));
}

/** A change of this proxy's health, a hold (it would recover but must wait), or null. */
export function planProxyHealth(p: ProxyHealthInput, now: Date): HealthDecision | HealthHold | null {
  if (p.pinned !== null) {
    if (p.pinned === p.healthy) return null;
    return {
      proxyId: p.proxyId,
      healthy: p.pinned,
      reason: `pinned ${p.pinned ? "healthy" : "unhealthy"} by an operator`,
      failing: [],
      pinned: true,
      releasedFromHold: null,
    };
  }
  const fresh = freshViews(p.views, now);
  if (fresh.length === 0) return null;
  const down = fresh.filter((v) => v.up === false);
  const up = fresh.filter((v) => v.up === true);
  const verdict = down.length > up.length ? false : up.length > down.length ? true : null;
  if (verdict === null || verdict === p.healthy) return null;
  const names = (vs: DirectorView[]) => vs.map((v) => v.director).join(", ");
  if (!verdict) {
    const failing = failingChecks(down);
    return {
      proxyId: p.proxyId,
      healthy: false,
      reason:
        `down on ${down.length} of ${fresh.length} directors (${names(down)})` +
        (failing.length > 0 ? `: ${failing.join("; ")}` : ""),
      failing,
      pinned: false,
      releasedFromHold: null,
    };
  }
  const holdMs = recoverHoldMs(p.recentFlips);
  const until = new Date(p.changedAt.getTime() + holdMs);
  const upOn = `up on ${up.length} of ${fresh.length} directors (${names(up)})`;
  const flapped = `${flappedWords(p.recentFlips)} in the last ${durationWords(FLAP_WINDOW_MS)}`;
  if (until > now) {
    return {
      proxyId: p.proxyId,
      until,
      holdMs,
      recentFlips: p.recentFlips,
      reason: `${upOn}, held until ${clockUtc(until)}: ${flapped}`,
    };
  }
  const held = upSince(up, down.length) < until.getTime();
  return {
    proxyId: p.proxyId,
    healthy: true,
    reason: held ? `${upOn}; released from a hold until ${clockUtc(until)} (${flapped})` : upOn,
    failing: [],
    pinned: false,
    releasedFromHold: held ? until : null,
  };
}

/**
 * Since when (ms) the up views have outvoted `downs` down views: the (downs+1)-th earliest `since`
 * of the up views. A view that did not say since when counts as up only now (Infinity), so a
 * recovery is called held only when the views show it.
 */
function upSince(up: readonly DirectorView[], downs: number): number {
  const times = up.map((v) => v.since?.getTime() ?? Infinity).sort((a, b) => a - b);
  return times[downs] ?? Infinity;
}

export const isDecision = (x: HealthDecision | HealthHold | null): x is HealthDecision =>
  x !== null && "healthy" in x;
