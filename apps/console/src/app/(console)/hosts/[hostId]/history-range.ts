/**
 * The host page's time range, kept in the URL so it round-trips on reload and can be shared:
 * nothing (live), `?range=15m|1h|24h|7d`, or `?from=<ISO>&to=<ISO>` (custom). The API checks the
 * values again (GET /hosts/{id}/history); this only decides what the page asks for.
 */

export const NAMED_RANGES = [
  { range: "15m", label: "15 min" },
  { range: "1h", label: "1 h" },
  { range: "24h", label: "24 h" },
  { range: "7d", label: "7 d" },
] as const;
export type NamedRange = (typeof NAMED_RANGES)[number]["range"];

export type HistoryChoice =
  { mode: "live" } | { mode: "range"; range: NamedRange } | { mode: "custom"; from: string; to: string };

interface Params {
  get(name: string): string | null;
}

/** What the URL asks for; an unknown range is live, a custom range needs both ends. */
export function historyChoiceOf(params: Params): HistoryChoice {
  const range = params.get("range");
  const named = NAMED_RANGES.find((r) => r.range === range);
  if (named) return { mode: "range", range: named.range };
  const from = params.get("from");
  const to = params.get("to");
  if (from && to) return { mode: "custom", from, to };
  return { mode: "live" };
}

/** The history API's input for a (non-live) choice; the host page and its server prefetch share it. */
export function historyInput(hostId: string, choice: Exclude<HistoryChoice, { mode: "live" }>) {
  return choice.mode === "range"
    ? { hostId, range: choice.range }
    : { hostId, from: choice.from, to: choice.to };
}

/** The query string of a choice (without "?"); "" for live. */
export function historyQuery(choice: HistoryChoice): string {
  if (choice.mode === "live") return "";
  const q = new URLSearchParams(
    choice.mode === "range" ? { range: choice.range } : { from: choice.from, to: choice.to },
  );
  return q.toString();
}

/** The host page at a choice. */
export function hostHistoryHref(hostId: string, choice: HistoryChoice): string {
  const q = historyQuery(choice);
  return `/hosts/${encodeURIComponent(hostId)}${q ? `?${q}` : ""}`;
}

/**
 * A `datetime-local` input's value (minutes, no zone; read as UTC on this page, which shows UTC
 * everywhere) from an ISO time, and back.
 */
export function toUtcInput(iso: string): string {
  const t = Date.parse(iso);
  return Number.isFinite(t) ? new Date(t).toISOString().slice(0, 16) : "";
}
export function fromUtcInput(value: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) return null;
  const t = Date.parse(`${value}Z`);
  return Number.isFinite(t) ? new Date(t).toISOString() : null;
}

/**
 * The history around a finding: from 15 min before it was first seen to 15 min after it resolved
 * (or now, if sooner or still open), as a custom range, cut to the `historyDays` the console keeps
 * (less an hour, so a browser clock somewhat ahead of the console's is not refused either). Null
 * when all of it is older than that: its history is gone.
 */
export const FINDING_MARGIN_MS = 15 * 60_000;
export const HISTORY_EDGE_MARGIN_MS = 60 * 60_000;
export function findingWindow(
  finding: { firstSeenAt: string; resolvedAt: string | null },
  now: number,
  historyDays: number,
): { mode: "custom"; from: string; to: string } | null {
  const oldest = now - historyDays * 86_400_000 + HISTORY_EDGE_MARGIN_MS;
  const from = Math.max(Date.parse(finding.firstSeenAt) - FINDING_MARGIN_MS, oldest);
  const end = finding.resolvedAt ? Date.parse(finding.resolvedAt) + FINDING_MARGIN_MS : now;
  const to = Math.min(end, now);
  // Whole seconds: the URL stays short and a reload asks for the same range.
  const round = (t: number) => new Date(Math.floor(t / 1000) * 1000).toISOString();
  if (round(to) <= round(from)) return null;
  return { mode: "custom", from: round(from), to: round(to) };
}
