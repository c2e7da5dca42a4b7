import type { ConnectionImpact, ProxyState } from "@tide/contracts";
import type { PoolTableDiff } from "../tables/table.service";

/**
 * What a proxy change does to the connections already established (issue 26 item 2): from each
 * proxy's own connection table (its agent's ESTABLISHED count on the pool's VIPs) and the table
 * diff, how many stay with a proxy that is still their row's primary, how many will reach their
 * proxy only as the row's second-chance hop, and how many lose every hop and are reset. Pure.
 *
 * Tide's row assignment (table-builder.ts): a draining proxy keeps the secondary of the rows it
 * led (so all its connections arrive by second chance); a filling proxy leads its rows with the old
 * primary as secondary (so the old primary's connections in those rows arrive by second chance);
 * an inactive proxy is in no row (so its connections have nowhere to go).
 *
 * A proxy's connections are not known row by row, only in total: when it hands over some of its
 * primary rows, the plan assumes its connections are spread evenly over the rows it led, and
 * moves that proportion (an estimate, marked `exact: false`). Handing over none or all is exact.
 */

export interface ImpactProxy {
  id: string;
  hostname: string;
  address: string;
  before: ProxyState;
  after: ProxyState;
}

/** A proxy's established connections to the pool's VIPs, or why it is unknown. */
export type EstablishedFigure = { count: number } | { count: null; reason: string };

export const PROPORTIONAL_ESTIMATE =
  "proportional to rows moved: a proxy handing over part of the rows it leads is assumed to hold " +
  "its connections evenly over them";

interface Split {
  kept: number;
  viaSecondChance: number;
  broken: number;
  /** The split is a proportion of the count, not a count. */
  proportional: boolean;
}

/** Fractions (of a proxy's established connections) kept, sent by second chance, broken. */
function splitOf(p: ImpactProxy, diff: PoolTableDiff | null): Split {
  const inTable = (s: ProxyState) => s !== "inactive";
  const none = { kept: 0, viaSecondChance: 0, broken: 0, proportional: false };
  // In no table before or after: the change does not touch it (nothing reaches it through Tide).
  if (!inTable(p.before) && !inTable(p.after)) return none;
  // Leaves the table (deactivate, abort of a fill): no row names it, whatever it holds breaks.
  if (!inTable(p.after)) return { ...none, broken: 1 };
  const share = diff?.shares.find((s) => s.address === p.address);
  const before = share?.before.primary ?? null;
  const after = share?.after.primary ?? null;
  // Leads no row after the change (draining): every connection arrives as a second-chance hop.
  if (p.after === "draining" || after === 0) return { ...none, viaSecondChance: 1 };
  // Led no row before (draining, aborted; joining from inactive): its connections were reaching it
  // by second chance or not at all, and go back to rows it leads again; none moves to a hop.
  const handedOver = before === null || after === null ? 0 : Math.max(0, before - after);
  if (before === null || before === 0 || handedOver === 0) return { ...none, kept: 1 };
  const f = handedOver / before;
  return { kept: 1 - f, viaSecondChance: f, broken: 0, proportional: true };
}

/**
 * Predict a change's effect on established connections. `proxies` are the pool's proxies with
 * their state before and after; `diff` the table diff (null when there is no table before or
 * after); `established` each proxy's fresh count by id (missing = unknown, no report).
 *
 * A figure is null when a proxy whose connections feed it is unknown (never a 0 it cannot know),
 * and exact when every part of it is a count rather than a proportion. Counts are rounded to whole
 * connections; `proxies` keeps the unrounded parts.
 */
export function planConnectionImpact(
  proxies: readonly ImpactProxy[],
  diff: PoolTableDiff | null,
  established: ReadonlyMap<string, EstablishedFigure>,
): ConnectionImpact {
  const totals = {
    kept: { sum: 0 as number | null, exact: true },
    viaSecondChance: { sum: 0 as number | null, exact: true },
    broken: { sum: 0 as number | null, exact: true },
  };
  const rows: ConnectionImpact["proxies"] = [];
  const unknown: ConnectionImpact["unknown"] = [];
  let estimated = false;
  for (const p of proxies) {
    const figure = established.get(p.id) ?? { count: null, reason: "no report from its host" };
    const split = splitOf(p, diff);
    // Unknown matters only for a proxy whose connections feed a figure.
    if (figure.count === null && split.kept + split.viaSecondChance + split.broken > 0)
      unknown.push({ proxyId: p.id, hostname: p.hostname, reason: figure.reason });
    const part = (k: keyof typeof totals) => {
      const f = split[k];
      const t = totals[k];
      if (f === 0) return 0;
      if (figure.count === null) {
        t.sum = null;
        t.exact = false;
        return null;
      }
      const v = figure.count * f;
      if (t.sum !== null) t.sum += v;
      if (split.proportional && figure.count > 0) {
        t.exact = false;
        estimated = true;
      }
      return v;
    };
    const kept = part("kept");
    const viaSecondChance = part("viaSecondChance");
    const broken = part("broken");
    rows.push({
      proxyId: p.id,
      hostname: p.hostname,
      established: figure.count,
      kept,
      viaSecondChance,
      broken: broken === null ? null : Math.round(broken),
    });
  }
  const out = (t: { sum: number | null; exact: boolean }) => ({
    count: t.sum === null ? null : Math.round(t.sum),
    exact: t.exact,
  });
  return {
    kept: out(totals.kept),
    viaSecondChance: out(totals.viaSecondChance),
    broken: out(totals.broken),
    proxies: rows,
    unknown,
    estimate: estimated ? PROPORTIONAL_ESTIMATE : null,
  };
}
