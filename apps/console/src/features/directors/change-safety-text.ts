import type { ChangeSafety, DirectorRemovalPreview, UnassignPreview } from "@tide/contracts";

/**
 * The console's words for a change-safety preview (the API's message says the rest): whether an
 * unassign or a director's removal breaks connections, in one line, and when a reason is needed.
 */

const connections = (n: number) => `${n.toLocaleString("en-US")} established connection${n === 1 ? "" : "s"}`;

/**
 * A reason is required when the proxies' reports say the change breaks connections, as the API
 * requires it; when they cannot say (a proxy sent no fresh report) the field is offered, not
 * required: an unknown count never blocks a change.
 */
export function reasonNeeded(safety: Pick<ChangeSafety, "breaks"> | undefined): boolean {
  return safety?.breaks === true;
}

/** Whether to offer the reason field at all: the change may break connections. */
export function reasonOffered(safety: Pick<ChangeSafety, "breaks"> | undefined): boolean {
  return safety !== undefined && safety.breaks !== false;
}

function unknownHosts(p: Pick<ChangeSafety, "unknown">): string {
  return p.unknown.map((u) => `${u.hostname}: ${u.reason}`).join("; ");
}

/** "Nothing breaks: dir-2 still serves lab." or "Nothing else serves lab: 12 established connections break." */
export function unassignText(p: UnassignPreview): string {
  if (!p.last) {
    const names = p.stillServedBy.map((d) => d.hostname).join(", ");
    return `Nothing breaks: ${names} still serve${p.stillServedBy.length === 1 ? "s" : ""} ${p.poolName}.`;
  }
  if (p.breaks === true)
    return (
      `Nothing else serves ${p.poolName}: ${p.unknown.length > 0 ? "at least " : ""}${connections(p.broken)} ` +
      `break${p.broken === 1 && p.unknown.length === 0 ? "s" : ""}.`
    );
  if (p.breaks === null)
    return `Nothing else serves ${p.poolName}: its connections break, how many is unknown (${unknownHosts(p)}).`;
  return p.message;
}

/** Each pool of a director's removal, in unassignText's words. */
export function removalText(p: DirectorRemovalPreview): string {
  return p.pools.length === 0 ? p.message : p.pools.map(unassignText).join(" ");
}
