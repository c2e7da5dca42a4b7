import type { ProxyAction, ProxyState, TableDiff } from "@tide/contracts";
import { shortHost } from "../../components/short-host";

const n = (v: number) => v.toLocaleString("en-US");
const proxies = (count: number) => `${count} ${count === 1 ? "proxy" : "proxies"}`;

/**
 * What a previewed action does, in one plain line, from the diff's figures (tide's row assignment:
 * a draining proxy keeps the second hop of the rows it led, a filling one leads its rows with the
 * old owner as second hop, an inactive one is in no row). Pure.
 */
export function previewSummary(input: {
  hostname: string;
  address: string;
  from: ProxyState;
  to: ProxyState;
  diff: TableDiff;
}): string {
  const { from, to, diff } = input;
  const host = shortHost(input.hostname);
  const share = diff.shares.find((s) => s.address === input.address);
  const others = diff.shares.filter((s) => s.address !== input.address && s.after.primary > 0).length;
  const led = share ? Math.max(share.before.primary, share.after.primary) : 0;
  if (diff.rowsChanged === 0)
    return `No row changes: ${host} becomes ${to} and every flow stays where it is.`;
  if (from === "active" && to === "draining")
    return `New flows go to the other ${others}; established flows still reach ${host} as secondary.`;
  if (from === "draining" && to === "inactive")
    return (
      `${host} leaves the table: connections still on it break; new flows are not affected ` +
      `(${n(diff.rowsSecondaryChanged)} rows get another secondary).`
    );
  if (from === "inactive" && to === "filling")
    return `${host} takes new flows on ${n(led)} rows; established flows still reach their old proxy as secondary.`;
  if (from === "draining" && to === "active")
    return (
      `${host} takes new flows again on its ${n(led)} rows; flows that began during the drain still ` +
      `reach their proxy as secondary.`
    );
  if (from === "filling" && to === "inactive")
    return (
      `${host} leaves the table: new flows on its ${n(led)} rows go back to the other ` +
      `${proxies(others)}; connections it took while filling break.`
    );
  return (
    `${n(diff.rowsPrimaryChanged)} rows change primary (new flows move), ` +
    `${n(diff.rowsChanged - diff.rowsPrimaryChanged)} only their secondary.`
  );
}

/**
 * Why a preview no longer describes what Confirm would do, or null while it still does: the pool's
 * table version moved on since it was computed (every proxy change, health change and bind change
 * writes one). Pure.
 */
export function staleReason(basedOnVersion: number | null, currentVersion: number | null): string | null {
  if (basedOnVersion === currentVersion) return null;
  const was = basedOnVersion === null ? "no table version" : `v${basedOnVersion}`;
  const now = currentVersion === null ? "none" : `v${currentVersion}`;
  return `The pool changed since this preview (it was computed against ${was}; the current version is ${now}).`;
}

/** Actions that take traffic away from a proxy ask for a reason (kept in the audit event). */
export function reasonRequired(action: ProxyAction): boolean {
  return action === "drain" || action === "deactivate";
}
