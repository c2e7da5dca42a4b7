"use client";

import type { FilterColumn } from "./decode-rows";
import styles from "./forwarding-table.module.css";
import type { TableBackend } from "./table-backend";

export interface RowFilterValue {
  slot: number | null;
  column: FilterColumn;
}

/** Show only rows where one proxy is primary, secondary, or either. */
export function RowFilter({
  backends,
  value,
  onChange,
  matches,
}: {
  backends: readonly TableBackend[];
  value: RowFilterValue;
  onChange: (value: RowFilterValue) => void;
  matches: number | null;
}) {
  return (
    <span className={styles.group}>
      <label>
        Proxy{" "}
        <select
          value={value.slot ?? ""}
          onChange={(e) =>
            onChange({ ...value, slot: e.target.value === "" ? null : Number(e.target.value) })
          }
          data-testid="filter-proxy"
        >
          <option value="">all rows</option>
          {backends.map((b) => (
            <option key={b.slot} value={b.slot}>
              {b.hostname} {b.address}
            </option>
          ))}
        </select>
      </label>
      <select
        aria-label="Column"
        value={value.column}
        onChange={(e) => onChange({ ...value, column: e.target.value as FilterColumn })}
        disabled={value.slot === null}
        data-testid="filter-column"
      >
        <option value="either">as primary or secondary</option>
        <option value="primary">as primary</option>
        <option value="secondary">as secondary</option>
      </select>
      {matches !== null && (
        <span className="muted" data-testid="filter-matches">
          {matches.toLocaleString("en-US")} rows
        </span>
      )}
    </span>
  );
}
