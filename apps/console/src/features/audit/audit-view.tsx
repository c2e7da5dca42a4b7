"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { ErrorNotice } from "~/components/error-notice";
import { useTRPC } from "~/trpc/react";
import { AuditRow } from "./audit-row";
import { AUDIT_PAGE } from "./audit-page-size";
import styles from "./audit.module.css";

/** The audit log, newest first, optionally of one pool; "Older" loads the next page. */
export function AuditView({ poolId }: { poolId: string | null }) {
  const trpc = useTRPC();
  const router = useRouter();
  const pools = useQuery(trpc.pools.list.queryOptions());
  const audit = useInfiniteQuery(
    trpc.audit.list.infiniteQueryOptions(
      { poolId: poolId ?? undefined, limit: AUDIT_PAGE },
      { getNextPageParam: (last) => last.nextCursor ?? undefined },
    ),
  );
  const entries = audit.data?.pages.flatMap((p) => p.items) ?? [];

  return (
    <div className={styles.page}>
      <div className={styles.filters}>
        <h1>Audit log</h1>
        <label>
          Pool{" "}
          <select
            value={poolId ?? ""}
            onChange={(e) => router.replace(e.target.value ? `/audit?pool=${e.target.value}` : "/audit")}
            data-testid="audit-pool-filter"
          >
            <option value="">all pools</option>
            {pools.data?.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
      </div>
      {audit.error && <ErrorNotice error={audit.error} />}
      <section className="panel">
        <table className="data" data-testid="audit-table">
          <thead>
            <tr>
              <th>Time (UTC)</th>
              <th>Actor</th>
              <th>Action</th>
              <th>Target</th>
              <th>Reason</th>
              <th>Before → after</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <AuditRow key={e.id} entry={e} />
            ))}
          </tbody>
        </table>
        {audit.data && entries.length === 0 && <p className="body muted">No events.</p>}
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
