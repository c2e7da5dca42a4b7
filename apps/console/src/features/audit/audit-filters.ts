import type { RouterInputs } from "~/trpc/types";

/**
 * The audit page's filters live in the URL (a filtered view is a link to share) and are applied by
 * the API. Times are UTC, as every time on the page: "2026-11-25T16:00" in the URL and the inputs.
 */

export type AuditQuery = Omit<RouterInputs["audit"]["list"], "limit" | "cursor">;

export interface AuditFilters {
  pool: string;
  action: string;
  actor: string;
  target: string;
  outcome: "" | "done" | "refused";
  /** UTC minutes as a datetime-local input holds them: "2026-11-25T16:00"; "" for open. */
  from: string;
  to: string;
  sessions: boolean;
}

export const NO_FILTERS: AuditFilters = {
  pool: "",
  action: "",
  actor: "",
  target: "",
  outcome: "",
  from: "",
  to: "",
  sessions: false,
};

type Search = Record<string, string | string[] | undefined>;

const UTC_MINUTE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/;

function one(search: Search, key: string): string {
  const v = search[key];
  return typeof v === "string" ? v.trim().slice(0, 200) : "";
}

/** The filters a URL asks for; values that make no sense are dropped and named in `dropped`. */
export function filtersFromSearch(search: Search): { filters: AuditFilters; dropped: string[] } {
  const dropped: string[] = [];
  const time = (key: "from" | "to") => {
    const v = one(search, key);
    if (v === "") return "";
    if (UTC_MINUTE.test(v) && !Number.isNaN(Date.parse(`${v}:00Z`))) return v;
    dropped.push(`${key === "from" ? "start" : "end"} time "${v}"`);
    return "";
  };
  const outcome = one(search, "outcome");
  const filters: AuditFilters = {
    pool: one(search, "pool"),
    action: one(search, "action"),
    actor: one(search, "actor"),
    target: one(search, "target"),
    outcome: outcome === "done" || outcome === "refused" ? outcome : "",
    from: time("from"),
    to: time("to"),
    sessions: one(search, "sessions") === "show",
  };
  if (filters.from && filters.to && filters.from >= filters.to) {
    dropped.push(`time range ${filters.from} to ${filters.to} (it ends before it starts)`);
    filters.from = "";
    filters.to = "";
  }
  if (filters.pool && !/^pool_[0-9a-z]+$/.test(filters.pool)) {
    dropped.push(`pool "${filters.pool}"`);
    filters.pool = "";
  }
  return { filters, dropped };
}

/** The URL of a filtered view (only the filters that are set). */
export function searchFromFilters(f: AuditFilters): string {
  const params = new URLSearchParams();
  if (f.pool) params.set("pool", f.pool);
  if (f.action) params.set("action", f.action);
  if (f.actor) params.set("actor", f.actor);
  if (f.target) params.set("target", f.target);
  if (f.outcome) params.set("outcome", f.outcome);
  if (f.from) params.set("from", f.from);
  if (f.to) params.set("to", f.to);
  if (f.sessions) params.set("sessions", "show");
  const s = params.toString();
  return s ? `?${s}` : "";
}

/** The API's query for these filters. */
export function queryFromFilters(f: AuditFilters): AuditQuery {
  return {
    ...(f.pool ? { poolId: f.pool } : {}),
    ...(f.action ? { action: f.action } : {}),
    ...(f.actor ? { actor: f.actor } : {}),
    ...(f.target ? { target: f.target } : {}),
    ...(f.outcome ? { outcome: f.outcome } : {}),
    ...(f.from ? { from: `${f.from}:00Z` } : {}),
    ...(f.to ? { to: `${f.to}:00Z` } : {}),
    sessions: f.sessions ? "show" : "hide",
  };
}
