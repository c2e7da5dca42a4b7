"use client";

import type { TableVersionSummary } from "@tide/contracts";
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useMemo } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { ChangeReportPanel } from "~/features/change-report/change-report-panel";
import { useChangeReports } from "~/features/change-report/use-change-reports";
import { useTRPC } from "~/trpc/react";
import { VersionDiff } from "./version-diff";
import { VERSIONS_PAGE } from "./versions-page-size";
import { VersionList } from "./version-list";
import styles from "./versions.module.css";

/** A version as the URL names it: its number ("7", as the table page does) or, in older links, its id. */
function resolve(ref: string | null, items: readonly TableVersionSummary[]): string | null | "missing" {
  if (ref === null) return null;
  if (/^\d+$/.test(ref)) return items.find((v) => v.version === Number(ref))?.id ?? "missing";
  return ref;
}

/**
 * A pool's table versions and the diff between two of them (default: the newest vs the previous).
 * The URL names versions by number: `?from=6&to=7`.
 */
export function VersionsView({
  poolId,
  fromRef,
  toRef,
}: {
  poolId: string;
  fromRef: string | null;
  toRef: string | null;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const pool = useQuery(trpc.pools.get.queryOptions({ poolId }));
  const versions = useInfiniteQuery(
    trpc.tables.versions.infiniteQueryOptions(
      { poolId, limit: VERSIONS_PAGE },
      { getNextPageParam: (last) => last.nextCursor ?? undefined },
    ),
  );
  const items = useMemo(() => versions.data?.pages.flatMap((p) => p.items) ?? [], [versions.data]);
  // One reports query per page of versions (VERSIONS_PAGE ids, within the API's 200).
  const pageIds = useMemo(
    () => versions.data?.pages.map((p) => p.items.map((v) => v.id)) ?? [],
    [versions.data],
  );
  const reports = useChangeReports(pageIds).byId;

  const toResolved = resolve(toRef, items);
  const fromResolved = resolve(fromRef, items);
  const missing = [
    toResolved === "missing" ? toRef : null,
    fromResolved === "missing" ? fromRef : null,
  ].filter((r): r is string => r !== null);
  // A version older than the pages loaded so far: load on until it shows up or there is no more.
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = versions;
  useEffect(() => {
    if (missing.length > 0 && hasNextPage && !isFetchingNextPage) void fetchNextPage();
  }, [missing.length, hasNextPage, isFetchingNextPage, fetchNextPage]);

  const to = (toResolved === "missing" ? null : toResolved) ?? items[0]?.id ?? null;
  const toIndex = items.findIndex((v) => v.id === to);
  const from =
    (fromResolved === "missing" ? null : fromResolved) ??
    (toIndex >= 0 ? (items[toIndex + 1]?.id ?? null) : null);

  /** Versions by number in the URL, like the table page's ?version=N. */
  const numberOf = (id: string | null) => items.find((v) => v.id === id)?.version ?? null;
  function pick(next: { from?: string | null; to?: string }) {
    const params = new URLSearchParams();
    const f = numberOf(next.from === undefined ? from : next.from);
    const t = numberOf(next.to ?? to);
    if (f !== null) params.set("from", String(f));
    if (t !== null) params.set("to", String(t));
    router.replace(`/pools/${poolId}/versions?${params.toString()}`, { scroll: false });
  }

  if (versions.error) return <ErrorNotice error={versions.error} />;
  return (
    <div className={styles.page}>
      <h1>
        <Link href={`/pools/${poolId}`}>{pool.data?.name ?? poolId}</Link> · table versions
      </h1>
      {missing.length > 0 && !hasNextPage && versions.data && (
        <p role="status" data-testid="versions-missing">
          This pool has no version {missing.join(" or ")}; showing the newest instead.
        </p>
      )}
      {to && toIndex >= 0 && <ChangeReportPanel version={numberOf(to)} report={reports.get(to)} />}
      {from && to ? (
        <VersionDiff fromId={from} toId={to} />
      ) : (
        versions.data && (
          <p className="muted">
            {items.length === 0
              ? "No versions yet."
              : "The first version has nothing before it: pick a version to compare it with."}
          </p>
        )
      )}
      <section className={`panel ${styles.listPanel}`} aria-label="Versions">
        {versions.data ? (
          <VersionList
            poolId={poolId}
            versions={items}
            fromId={from}
            toId={to}
            reports={reports}
            onPick={pick}
          />
        ) : (
          <p className="body muted">Loading versions…</p>
        )}
        {versions.hasNextPage && (
          <div className={styles.more}>
            <button
              type="button"
              onClick={() => void versions.fetchNextPage()}
              disabled={versions.isFetchingNextPage}
            >
              {versions.isFetchingNextPage ? "Loading…" : "Older versions"}
            </button>
          </div>
        )}
      </section>
    </div>
  );
}
