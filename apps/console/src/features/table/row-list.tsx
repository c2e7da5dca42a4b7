"use client";

import { useVirtualizer } from "@tanstack/react-virtual";
import { forwardRef, useImperativeHandle, useRef } from "react";
import { backendBackground } from "~/components/proxy-colors";
import styles from "./forwarding-table.module.css";
import { formatRowHex, TABLE_ROWS } from "./row-number";
import type { TableBackend } from "./table-backend";

const ROW_H = 22;

export interface RowListHandle {
  /** Scroll so the row at this list position is centred. */
  scrollToIndex: (index: number) => void;
  /** Back to the first row (a new filter starts at the top of its rows). */
  scrollToTop: () => void;
}

/**
 * A proxy in a row: its host name and address; on a narrow screen only the part of the name that
 * tells the pool's proxies apart ("…02"), the full name on hover and for screen readers.
 */
function Cell({ backend, slot, part }: { backend: TableBackend | undefined; slot: number; part: string }) {
  if (!backend) return <span className={styles.notDrawn}>slot {slot}?</span>;
  return (
    <span className={styles.cell} title={`${backend.hostname} ${backend.address} (${backend.state})`}>
      <span className={styles.swatch} style={{ background: backendBackground(slot) }} aria-hidden="true" />
      <span className={styles.hostFull}>{backend.hostname}</span>
      <span className={styles.hostPart} aria-hidden="true" data-testid="host-part">
        {part}
      </span>{" "}
      <span className={styles.addr}>{backend.address}</span>
    </span>
  );
}

/**
 * All rows of a table (or the filtered ones), virtualized: only the rows in view (+ overscan) are in
 * the DOM, so 65,536 rows scroll smoothly. The first screen renders on the server too (initialRect).
 */
export const RowList = forwardRef<
  RowListHandle,
  {
    primary: Uint8Array;
    secondary: Uint8Array;
    backends: (TableBackend | undefined)[];
    /** Host name -> its distinguishing part, for narrow screens. */
    hostParts: ReadonlyMap<string, string>;
    /** Row numbers to show, in order; null = all 65,536. */
    rows: Uint32Array | null;
    highlightRow: number | null;
  }
>(function RowList({ primary, secondary, backends, hostParts, rows, highlightRow }, ref) {
  const scrollerRef = useRef<HTMLDivElement>(null);
  const count = rows ? rows.length : TABLE_ROWS;
  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scrollerRef.current,
    estimateSize: () => ROW_H,
    overscan: 24,
    initialRect: { width: 900, height: 700 },
    paddingStart: ROW_H, // room for the sticky header row
    scrollPaddingStart: ROW_H,
  });

  useImperativeHandle(
    ref,
    () => ({
      scrollToIndex: (index) => virtualizer.scrollToIndex(index, { align: "center" }),
      scrollToTop: () => virtualizer.scrollToOffset(0),
    }),
    [virtualizer],
  );

  return (
    <div
      ref={scrollerRef}
      className={styles.scroller}
      tabIndex={0}
      role="table"
      aria-label="Forwarding table rows"
      aria-rowcount={count + 1}
      data-testid="table-rows"
      data-count={count}
    >
      <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
        <div className={styles.headerRow} role="row" aria-rowindex={1}>
          <span role="columnheader">Row</span>
          <span role="columnheader" className={styles.dec}>
            dec
          </span>
          <span role="columnheader">Primary</span>
          <span role="columnheader">Secondary</span>
        </div>
        {virtualizer.getVirtualItems().map((item) => {
          const row = rows ? (rows[item.index] ?? 0) : item.index;
          const p = primary[row] ?? 0;
          const s = secondary[row] ?? 0;
          return (
            <div
              key={item.key}
              role="row"
              aria-rowindex={item.index + 2}
              className={`${styles.row} ${row === highlightRow ? styles.highlight : ""}`}
              aria-current={row === highlightRow ? "true" : undefined}
              style={{ transform: `translateY(${item.start}px)` }}
              data-testid="table-row"
              data-row={row}
            >
              <span role="cell">{formatRowHex(row)}</span>
              <span role="cell" className={styles.dec}>
                {row}
              </span>
              <span role="cell">
                <Cell
                  backend={backends[p]}
                  slot={p}
                  part={hostParts.get(backends[p]?.hostname ?? "") ?? ""}
                />
              </span>
              <span role="cell">
                <Cell
                  backend={backends[s]}
                  slot={s}
                  part={hostParts.get(backends[s]?.hostname ?? "") ?? ""}
                />
              </span>
            </div>
          );
        })}
      </div>
    </div>
  );
});
