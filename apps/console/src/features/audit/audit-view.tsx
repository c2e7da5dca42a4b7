"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { type FormEvent, useMemo } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { useChangeReports } from "~/features/change-report/use-change-reports";
import { useTRPC } from "~/trpc/react";
import { AuditRow } from "./audit-row";
import { AUDIT_PAGE } from "./audit-page-size";
import { type AuditFilters, NO_FILTERS, queryFromFilters, searchFromFilters } from "./audit-filters";
import styles from "./audit.module.css";

function text(form: FormData, key: string): string {
  const v = form.get(key);
  return typeof v === "string" ? v.trim() : "";
}

/**
 * The audit log, newest first, filtered on the server by what the URL says; "Older events" loads
 * the next page. Sign-ins are hidden unless asked for: they are many and rarely what one looks for.
 */
export function AuditView({ filters, dropped }: { filters: AuditFilters; dropped: string[] }) {
  const trpc = useTRPC();
  const router = useRouter();
  const pools = useQuery(trpc.pools.list.queryOptions());
  const facets = useQuery(trpc.audit.facets.queryOptions());
  const audit = useInfiniteQuery(
    trpc.audit.list.infiniteQueryOptions(
      { ...queryFromFilters(filters), limit: AUDIT_PAGE },
      { getNextPageParam: (last) => last.nextCursor ?? undefined },
    ),
  );
  const entries = audit.data?.pages.flatMap((p) => p.items) ?? [];
  // The change reports of the versions the events wrote: one query per page of events, not per row.
  const versionIds = useMemo(
    () =>
      audit.data?.pages.map((p) => [
        ...new Set(p.items.flatMap((e) => (e.tableVersionId === null ? [] : [e.tableVersionId]))),
      ]) ?? [],
    [audit.data],
  );
  const reports = useChangeReports(versionIds).byId;
  const go = (f: AuditFilters) => router.replace(`/audit${searchFromFilters(f)}`);
  const filtered = searchFromFilters({ ...filters, sessions: false }) !== "";

  const apply = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const outcome = text(form, "outcome");
    go({
      pool: text(form, "pool"),
      action: text(form, "action"),
      actor: text(form, "actor"),
      target: text(form, "target"),
      outcome: outcome === "done" || outcome === "refused" ? outcome : "",
      from: text(form, "from"),
      to: text(form, "to"),
      sessions: form.get("sessions") === "show",
    });
  };

  return (
    <div className={styles.page}>
      <h1>Audit log</h1>
      {/* key: a new URL resets the inputs to what it says (back/forward, links). */}
      <form
        key={searchFromFilters(filters)}
        className={styles.filters}
        onSubmit={apply}
        data-testid="audit-filters"
        aria-label="Filter the audit log"
      >
        <label>
          Pool
          <select name="pool" defaultValue={filters.pool} data-testid="audit-pool-filter">
            <option value="">all pools</option>
            {pools.data?.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Action
          <select name="action" defaultValue={filters.action} data-testid="audit-action-filter">
            <option value="">all actions</option>
            {[...new Set([...(facets.data?.actions ?? []), ...(filters.action ? [filters.action] : [])])].map(
              (a) => (
                <option key={a} value={a}>
                  {a}
                </option>
              ),
            )}
          </select>
        </label>
        <label>
          Actor
          <input
            name="actor"
            defaultValue={filters.actor}
            list="audit-actors"
            placeholder="email or token"
            data-testid="audit-actor-filter"
          />
          <datalist id="audit-actors">
            {facets.data?.actors.map((a) => (
              <option key={a} value={a} />
            ))}
          </datalist>
        </label>
        <label>
          Target
          <input
            name="target"
            defaultValue={filters.target}
            placeholder="name or id"
            data-testid="audit-target-filter"
          />
        </label>
        <label>
          Outcome
          <select name="outcome" defaultValue={filters.outcome} data-testid="audit-outcome-filter">
            <option value="">done and refused</option>
            <option value="done">done</option>
            <option value="refused">refused</option>
          </select>
        </label>
        <label>
          From (UTC)
          <input type="datetime-local" name="from" defaultValue={filters.from} data-testid="audit-from" />
        </label>
        <label>
          To (UTC)
          <input type="datetime-local" name="to" defaultValue={filters.to} data-testid="audit-to" />
        </label>
        <label className={styles.check}>
          <input
            type="checkbox"
            name="sessions"
            value="show"
            defaultChecked={filters.sessions}
            data-testid="audit-sessions"
          />
          Show sign-ins
        </label>
        <div className={styles.buttons}>
          <button type="submit" data-testid="audit-apply">
            Apply
          </button>
          {filtered && (
            <Link href={`/audit${searchFromFilters({ ...NO_FILTERS, sessions: filters.sessions })}`}>
              Clear filters
            </Link>
          )}
        </div>
      </form>
      {dropped.length > 0 && (
        <p className="muted" role="status" data-testid="audit-dropped">
          Ignored in the link: {dropped.join("; ")}.
        </p>
      )}
      {audit.error && <ErrorNotice error={audit.error} />}
      <section className={`panel ${styles.panel}`}>
        <div className={styles.scroll}>
          <table className={`data ${styles.table}`} data-testid="audit-table">
            <thead>
              <tr>
                <th>Time (UTC)</th>
                <th>Actor</th>
                <th>Action</th>
                <th>Target</th>
                <th>Reason</th>
                <th>Change</th>
                <th>
                  <span className="sr-only">Table version and its connections</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <AuditRow
                  key={e.id}
                  entry={e}
                  report={e.tableVersionId === null ? undefined : reports.get(e.tableVersionId)}
                />
              ))}
            </tbody>
          </table>
        </div>
        {audit.data && entries.length === 0 && (
          <p className="body muted" data-testid="audit-empty">
            {filtered ? "No events match these filters." : "No events."}
          </p>
        )}
        {!audit.data && !audit.error && <p className="body muted">Loading…</p>}
        {audit.hasNextPage && (
          <div className={styles.more}>
            <button
              type="button"
              onClick={() => void audit.fetchNextPage()}
              disabled={audit.isFetchingNextPage}
            >
              {audit.isFetchingNextPage ? "Loading…" : "Older events"}
            </button>
          </div>
        )}
      </section>
    </div>
  );
}
