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
import { countSlots, decodeSlots, type FilterColumn, rowsWithSlot } from "./decode-rows";
import { ExplainFlow } from "./explain-flow";
import styles from "./forwarding-table.module.css";
import { JumpToRow } from "./jump-to-row";
import { distinctHostParts } from "./host-labels";
import { RowFilter } from "./row-filter";
import { RowList, type RowListHandle } from "./row-list";
import { bySlot } from "./table-backend";
import { TableShares } from "./table-shares";
import { searchFromTableState, tableStateFromSearch, type TableUrlState } from "./table-url";
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

/** Rows of one proxy (by id: stable across versions), as primary, secondary or either. */
interface ProxyFilter {
  proxyId: string | null;
  column: FilterColumn;
}

function TableOfVersion({
  poolId,
  version,
  urlVersion,
  initial,
}: {
  poolId: string;
  version: TableVersionSummary;
  /** The version the URL names (null: the current one), kept as is when the view is written back. */
  urlVersion: number | null;
  initial: TableUrlState;
}) {
  const { error, decoded } = useDecodedRows(version.id);
  const [filter, setFilter] = useState<ProxyFilter>({ proxyId: initial.proxy, column: initial.column });
  const [highlight, setHighlight] = useState<number | null>(initial.row);
  const [scrollTo, setScrollTo] = useState<number | null>(initial.row);
  const [explained, setExplained] = useState<{ src: string; dst: string }>({
    src: initial.src,
    dst: initial.dst,
  });
  const list = useRef<RowListHandle>(null);
  const jumpInput = useRef<HTMLInputElement>(null);

  // The filter names a proxy by id; this version's rows name it by slot.
  const slot = useMemo(
    () => decoded?.backends.find((b) => b.proxyId === filter.proxyId)?.slot ?? null,
    [decoded, filter.proxyId],
  );
  const missingProxy = decoded !== null && filter.proxyId !== null && slot === null;
  const filtered = useMemo(
    () =>
      decoded && slot !== null ? rowsWithSlot(decoded.primary, decoded.secondary, slot, filter.column) : null,
    [decoded, slot, filter.column],
  );
  const hostParts = useMemo(
    () => distinctHostParts(decoded?.backends.map((b) => b.hostname) ?? []),
    [decoded],
  );

  // The view lives in the URL (reload and links restore it); replaceState: no server round trip.
  useEffect(() => {
    const search = searchFromTableState(urlVersion, {
      row: highlight,
      proxy: filter.proxyId,
      column: filter.column,
      src: explained.src,
      dst: explained.dst,
    });
    const url = `/pools/${poolId}/table${search}`;
    if (`${window.location.pathname}${window.location.search}` !== url)
      window.history.replaceState(null, "", url);
  }, [poolId, urlVersion, highlight, filter, explained]);

  // Scroll once the list shows the rows the target is in (a jump may have cleared the filter).
  useEffect(() => {
    if (scrollTo === null || !decoded) return;
    const index = filtered ? filtered.indexOf(scrollTo) : scrollTo;
    if (index >= 0) list.current?.scrollToIndex(index);
    setScrollTo(null);
  }, [scrollTo, filtered, decoded]);

  const goToRow = useCallback(
    (row: number) => {
      if (filtered && filtered.indexOf(row) < 0) setFilter((f) => ({ ...f, proxyId: null }));
      setHighlight(row);
      setScrollTo(row);
    },
    [filtered],
  );

  /** A new filter shows its rows from the top, wherever an earlier jump had scrolled to. */
  const changeFilter = useCallback((next: ProxyFilter) => {
    setFilter(next);
    setScrollTo(null);
    list.current?.scrollToTop();
  }, []);

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
          value={{ slot, column: filter.column }}
          onChange={(v) =>
            changeFilter({
              proxyId:
                v.slot === null ? null : (decoded?.backends.find((b) => b.slot === v.slot)?.proxyId ?? null),
              column: v.column,
            })
          }
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
      {missingProxy && (
        <p className="muted" role="status" data-testid="filter-missing">
          The proxy this link filters by is not in version {version.version}; showing every row.
        </p>
      )}
      <div className={styles.layout}>
        <div className={`panel ${styles.rowsPanel}`}>
          {decoded ? (
            <RowList
              ref={list}
              primary={decoded.primary}
              secondary={decoded.secondary}
              backends={decoded.slots}
              hostParts={hostParts}
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
          <ExplainFlow
            versionId={version.id}
            initial={initial}
            onRow={goToRow}
            onExplained={(src, dst) => setExplained({ src, dst })}
          />
          {decoded && (
            <TableShares
              backends={decoded.backends}
              primaryCounts={decoded.primaryCounts}
              secondaryCounts={decoded.secondaryCounts}
              selectedSlot={slot}
              onSelect={(s) =>
                changeFilter({
                  ...filter,
                  proxyId: s === null ? null : (decoded.backends.find((b) => b.slot === s)?.proxyId ?? null),
                })
              }
            />
          )}
        </div>
      </div>
    </>
  );
}

/** The forwarding table of a pool at one version (the current one unless ?version=N). */
export function ForwardingTableView({
  poolId,
  version,
  initial,
}: {
  poolId: string;
  version: number | null;
  initial: TableUrlState;
}) {
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
            onChange={(v) => {
              // Another version keeps the row, filter and flow the URL holds now.
              const now = tableStateFromSearch(
                Object.fromEntries(new URLSearchParams(window.location.search)),
              );
              router.replace(`/pools/${poolId}/table${searchFromTableState(v, now)}`, { scroll: false });
            }}
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
        <TableOfVersion
          key={chosen.id}
          poolId={poolId}
          version={chosen}
          urlVersion={version}
          initial={initial}
        />
      )}
    </div>
  );
}
