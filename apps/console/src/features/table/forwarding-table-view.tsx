"use client";

import type { TableVersionSummary } from "@tide/contracts";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { HashPrefix } from "~/components/hash-prefix";
import { usePageKeys } from "~/components/use-page-keys";
import { useTRPC } from "~/trpc/react";
import { countSlots, decodeSlots, rowsWithSlot } from "./decode-rows";
import { ExplainFlow } from "./explain-flow";
import styles from "./forwarding-table.module.css";
import { JumpToRow } from "./jump-to-row";
import { RowFilter, type RowFilterValue } from "./row-filter";
import { RowList, type RowListHandle } from "./row-list";
import { bySlot } from "./table-backend";
import { TableShares } from "./table-shares";
import { VersionPicker } from "./version-picker";

/** Rows of one version, decoded once (versions are immutable, so the query never goes stale). */
function useDecodedRows(versionId: string) {
  const trpc = useTRPC();
  const rows = useQuery({
    ...trpc.tables.rows.queryOptions({ versionId }),
    staleTime: Infinity,
    gcTime: 300_000,
  });
  const decoded = useMemo(() => {
    if (!rows.data) return null;
    const primary = decodeSlots(rows.data.primary);
    const secondary = decodeSlots(rows.data.secondary);
    const size = Math.max(0, ...rows.data.backends.map((b) => b.slot + 1));
    return {
      primary,
      secondary,
      backends: rows.data.backends,
      slots: bySlot(rows.data.backends),
      primaryCounts: countSlots(primary, size),
      secondaryCounts: countSlots(secondary, size),
    };
  }, [rows.data]);
  return { error: rows.error, decoded };
}

function TableOfVersion({ poolId, version }: { poolId: string; version: TableVersionSummary }) {
  const { error, decoded } = useDecodedRows(version.id);
  const [filter, setFilter] = useState<RowFilterValue>({ slot: null, column: "either" });
  const [highlight, setHighlight] = useState<number | null>(null);
  const [scrollTo, setScrollTo] = useState<number | null>(null);
  const list = useRef<RowListHandle>(null);
  const jumpInput = useRef<HTMLInputElement>(null);

  const filtered = useMemo(
    () =>
      decoded && filter.slot !== null
        ? rowsWithSlot(decoded.primary, decoded.secondary, filter.slot, filter.column)
        : null,
    [decoded, filter],
  );

  // Scroll once the list shows the rows the target is in (a jump may have cleared the filter).
  useEffect(() => {
    if (scrollTo === null || !decoded) return;
    const index = filtered ? filtered.indexOf(scrollTo) : scrollTo;
    if (index >= 0) list.current?.scrollToIndex(index);
    setScrollTo(null);
  }, [scrollTo, filtered, decoded]);

  const goToRow = useCallback(
    (row: number) => {
      if (filtered && filtered.indexOf(row) < 0) setFilter((f) => ({ ...f, slot: null }));
      setHighlight(row);
      setScrollTo(row);
    },
    [filtered],
  );

  const onKey = useCallback((key: string) => {
    if (key !== "/") return false;
    jumpInput.current?.focus();
    return true;
  }, []);
  usePageKeys(onKey);

  if (error) return <ErrorNotice error={error} />;
  return (
    <>
      <div className={`panel ${styles.toolbar}`}>
        <RowFilter
          backends={decoded?.backends ?? []}
          value={filter}
          onChange={setFilter}
          matches={filtered ? filtered.length : null}
        />
        <JumpToRow ref={jumpInput} onJump={goToRow} />
        <a
          href={`/api/v1/pools/${poolId}/tables/${version.version}/glbd`}
          download
          className="button"
          data-testid="download-glbd"
        >
          Download GLBD
        </a>
      </div>
      <div className={styles.layout}>
        <div className="panel">
          {decoded ? (
            <RowList
              ref={list}
              primary={decoded.primary}
              secondary={decoded.secondary}
              backends={decoded.slots}
              rows={filtered}
              highlightRow={highlight}
            />
          ) : (
            <p className="body muted" aria-busy="true">
              Loading 65,536 rows…
            </p>
          )}
        </div>
        <div className={styles.side}>
          <ExplainFlow versionId={version.id} onRow={goToRow} />
          {decoded && (
            <TableShares
              backends={decoded.backends}
              primaryCounts={decoded.primaryCounts}
              secondaryCounts={decoded.secondaryCounts}
              selectedSlot={filter.slot}
              onSelect={(slot) => setFilter((f) => ({ ...f, slot }))}
            />
          )}
        </div>
      </div>
    </>
  );
}

/** The forwarding table of a pool at one version (the current one unless ?version=N). */
export function ForwardingTableView({ poolId, version }: { poolId: string; version: number | null }) {
  const trpc = useTRPC();
  const router = useRouter();
  const pool = useQuery(trpc.pools.get.queryOptions({ poolId }));
  const versions = useQuery(trpc.tables.versions.queryOptions({ poolId, limit: 200 }));

  const items = versions.data?.items ?? [];
  const chosen = version === null ? items[0] : items.find((v) => v.version === version);

  const error = pool.error ?? versions.error;
  if (error) return <ErrorNotice error={error} />;
  return (
    <div className={styles.page}>
      <div className={styles.title}>
        <h1>
          <Link href={`/pools/${poolId}`}>{pool.data?.name ?? poolId}</Link> · forwarding table
        </h1>
        {items.length > 0 && chosen && (
          <VersionPicker
            versions={items}
            value={chosen.version}
            onChange={(v) => router.replace(`/pools/${poolId}/table?version=${v}`, { scroll: false })}
          />
        )}
        {chosen && (
          <span className="muted" data-testid="table-version" data-version={chosen.version}>
            v{chosen.version} <HashPrefix hash={chosen.contentHash} /> · {chosen.cause} · {chosen.actor}
          </span>
        )}
      </div>
      {!versions.data ? (
        <p className="muted">Loading versions…</p>
      ) : !chosen ? (
        <p className="muted">
          {version === null
            ? "This pool has no table yet."
            : `Version ${version} is not among the latest 200.`}
        </p>
      ) : (
        <TableOfVersion key={chosen.id} poolId={poolId} version={chosen} />
      )}
    </div>
  );
}
