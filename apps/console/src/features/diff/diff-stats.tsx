import type { TableDiff } from "@tide/contracts";
import { TABLE_ROWS as ROWS } from "@tide/forwarding/types";
import styles from "./table-diff.module.css";

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

const status = (s: { state: string; healthy: boolean }) =>
  `${s.state}, ${s.healthy ? "healthy" : "unhealthy"}`;

/**
 * What changes beyond rows: a hash key or hash fields change moves flows to other rows although no
 * row changes (with the sampled estimate of flows that change proxy), binds, and state or health
 * changes that move no row.
 */
function OtherChanges({ diff }: { diff: TableDiff }) {
  const quiet = diff.statusChanges.filter((c) => c.primaryRowsChanged === 0);
  const lines: { key: string; text: string }[] = [];
  if (diff.hashFields.changed || diff.hashKeyChanged) {
    const what = [
      diff.hashKeyChanged ? "hash key changed" : null,
      diff.hashFields.changed
        ? `hash fields ${diff.hashFields.before.join(", ")} → ${diff.hashFields.after.join(", ")}`
        : null,
    ]
      .filter((x) => x !== null)
      .join("; ");
    const moved = diff.flowsMoved
      ? `: about ${(diff.flowsMoved.fraction * 100).toFixed(1)}% of flows change proxy (${diff.flowsMoved.moved.toLocaleString("en-US")} of ${diff.flowsMoved.sampled.toLocaleString("en-US")} sampled)`
      : "";
    lines.push({ key: "hash", text: `${what}${moved}` });
  }
  for (const b of diff.binds.added) lines.push({ key: `+${b}`, text: `bind added: ${b}` });
  for (const b of diff.binds.removed) lines.push({ key: `-${b}`, text: `bind removed: ${b}` });
  for (const c of quiet)
    lines.push({
      key: `s${c.address}`,
      text: `${c.hostname || c.address}: ${status(c.before)} → ${status(c.after)} (moves no rows)`,
    });
  if (lines.length === 0) return null;
  return (
    <ul className={styles.other} data-testid="diff-other-changes">
      {lines.map((l) => (
        <li key={l.key} data-testid="diff-other-change">
          {l.text}
        </li>
      ))}
    </ul>
  );
}

/** How many of the 65,536 rows change: primary (new flows move), secondary (second chance hop). */
export function DiffStats({ diff }: { diff: TableDiff }) {
  return (
    <>
      <Summary diff={diff} />
      <OtherChanges diff={diff} />
    </>
  );
}

function Summary({ diff }: { diff: TableDiff }) {
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
