import type { ConnectionImpact, ProxyAction, ProxyState, TableDiff } from "@tide/contracts";
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

/**
 * Actions that take traffic away from a proxy ask for a reason (kept in the audit event), and so
 * does any change predicted to break connections, or whose breakage is unknown (the API refuses
 * one predicted to break without a reason).
 */
export function reasonRequired(action: ProxyAction, impact?: ConnectionImpact | null): boolean {
  if (impact && impact.broken.count !== 0) return true;
  return action === "drain" || action === "deactivate";
}

const connections = (count: number) => `${n(count)} ${count === 1 ? "connection" : "connections"}`;

/**
 * A preview's prediction for established connections, in plain words. Pure.
 * - summary: "0 connections break; ~120 reach their proxy by second chance." (~ marks an estimate)
 * - breaks: the warning when some break, per proxy ("37 established connections on proxy-www-03 break")
 * - unknown: the proxies with no fresh figure, and why
 * - estimate: how the ~ figures were estimated
 */
export function impactLines(impact: ConnectionImpact): {
  summary: string;
  breaks: { count: number; text: string } | null;
  unknown: string | null;
  estimate: string | null;
} {
  const fig = (f: ConnectionImpact["broken"]) =>
    f.count === null ? null : `${f.exact ? "" : "~"}${n(f.count)}`;
  const second = impact.viaSecondChance.count;
  const secondText =
    second === null
      ? "how many reach their proxy by second chance is unknown"
      : `${fig(impact.viaSecondChance)} reach${second === 1 ? "es" : ""} ${second === 1 ? "its" : "their"} proxy by second chance`;
  const broken = impact.broken.count;
  const brokenText =
    broken === null
      ? "How many connections break is unknown"
      : `${broken === 0 ? "0 connections" : connections(broken)} break${broken === 1 ? "s" : ""}`;
  const breaking = impact.proxies.filter((p) => (p.broken ?? 0) > 0);
  const breaks =
    broken !== null && broken > 0
      ? {
          count: broken,
          text:
            breaking
              .map(
                (p) =>
                  `${n(p.broken!)} established ${p.broken === 1 ? "connection" : "connections"} on ` +
                  `${shortHost(p.hostname)} ${p.broken === 1 ? "breaks" : "break"}`,
              )
              .join("; ") + ": they have no hop left once it leaves the table.",
        }
      : null;
  return {
    summary: `${brokenText}; ${secondText}.`,
    breaks,
    unknown:
      impact.unknown.length === 0
        ? null
        : "Unknown for " +
          impact.unknown.map((u) => `${shortHost(u.hostname)} (${u.reason})`).join(", ") +
          ": figures that depend on it are not counted as 0.",
    estimate: impact.estimate === null ? null : `~ estimated, ${impact.estimate}.`,
  };
}
