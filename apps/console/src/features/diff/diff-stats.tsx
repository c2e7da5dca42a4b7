import type { TableDiff } from "@tide/contracts";
import styles from "./table-diff.module.css";

const ROWS = 65_536;

function Stat({ value, label, testId }: { value: number; label: string; testId: string }) {
  return (
    <div className={styles.stat}>
      <span className={styles.statValue} data-testid={testId} data-value={value}>
        {value.toLocaleString("en-US")}
      </span>
      <span className={styles.statLabel}>
        {label} · {((value / ROWS) * 100).toFixed(2)}%
      </span>
    </div>
  );
}

/** How many of the 65,536 rows change: primary (new flows move), secondary (second chance hop). */
export function DiffStats({ diff }: { diff: TableDiff }) {
  return (
    <div className={styles.summary}>
      <Stat value={diff.rowsPrimaryChanged} label="rows, primary changes" testId="rows-primary-changed" />
      <Stat
        value={diff.rowsSecondaryChanged}
        label="rows, secondary changes"
        testId="rows-secondary-changed"
      />
      <Stat value={diff.rowsChanged} label="rows changed" testId="rows-changed" />
    </div>
  );
}
