"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { ErrorNotice } from "~/components/error-notice";
import { useTRPC } from "~/trpc/react";
import { VersionDiff } from "./version-diff";
import { VERSIONS_PAGE } from "./versions-page-size";
import { VersionList } from "./version-list";
import styles from "./versions.module.css";

/** A pool's table versions and the diff between two of them (default: the newest vs the previous). */
export function VersionsView({
  poolId,
  fromId,
  toId,
}: {
  poolId: string;
  fromId: string | null;
  toId: string | null;
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
  const items = versions.data?.pages.flatMap((p) => p.items) ?? [];

  const to = toId ?? items[0]?.id ?? null;
  const toIndex = items.findIndex((v) => v.id === to);
  const from = fromId ?? (toIndex >= 0 ? (items[toIndex + 1]?.id ?? null) : null);

  function pick(next: { from?: string | null; to?: string }) {
    const params = new URLSearchParams();
    const f = next.from === undefined ? from : next.from;
    const t = next.to ?? to;
    if (f) params.set("from", f);
    if (t) params.set("to", t);
    router.replace(`/pools/${poolId}/versions?${params.toString()}`, { scroll: false });
  }

  if (versions.error) return <ErrorNotice error={versions.error} />;
  return (
    <div className={styles.page}>
      <h1>
        <Link href={`/pools/${poolId}`}>{pool.data?.name ?? poolId}</Link> · table versions
      </h1>
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
      <section className="panel" aria-label="Versions">
        {versions.data ? (
          <VersionList poolId={poolId} versions={items} fromId={from} toId={to} onPick={pick} />
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
