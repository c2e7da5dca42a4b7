"use client";

import type { ChangeReport, TableVersionSummary } from "@tide/contracts";
import Link from "next/link";
import { HashPrefix } from "~/components/hash-prefix";
import { ChangeReportBadge } from "~/features/change-report/change-report-badge";
import { UtcTime } from "~/components/time-ago";
import styles from "./versions.module.css";

/**
 * Versions newest first. Click a row to diff it against the previous version, or pick any two with
 * the "from" and "to" radios. "Connections" is each version's change report in a few words.
 */
export function VersionList({
  poolId,
  versions,
  fromId,
  toId,
  reports,
  onPick,
}: {
  poolId: string;
  versions: TableVersionSummary[];
  fromId: string | null;
  toId: string | null;
  /** By version id; null: none; absent: not read yet. */
  reports: ReadonlyMap<string, ChangeReport | null>;
  onPick: (pick: { from?: string | null; to?: string }) => void;
}) {
  const fromIndex = versions.findIndex((v) => v.id === fromId);
  const toIndex = versions.findIndex((v) => v.id === toId);
  return (
    <table className="data" data-testid="version-list">
      <thead>
        <tr>
          <th title="Diff from this version">from</th>
          <th title="Diff to this version">to</th>
          <th className="num">Version</th>
          <th title="What the change did to established connections (its change report)">Connections</th>
          <th>Hash</th>
          <th>Cause</th>
          <th>Actor</th>
          <th>Reason</th>
          <th>Time (UTC)</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {versions.map((v, i) => {
          const selected = v.id === toId || v.id === fromId;
          const inRange =
            toIndex >= 0 &&
            fromIndex >= 0 &&
            i > Math.min(toIndex, fromIndex) &&
            i < Math.max(toIndex, fromIndex);
          return (
            <tr
              key={v.id}
              className={`${styles.row} ${selected ? styles.selected : inRange ? styles.inRange : ""}`}
              onClick={() => onPick({ to: v.id, from: null })}
              data-testid="version-row"
              data-version={v.version}
              data-version-id={v.id}
              aria-selected={v.id === toId}
            >
              <td onClick={(e) => e.stopPropagation()}>
                <input
                  type="radio"
                  name="diff-from"
                  aria-label={`Diff from v${v.version}`}
                  checked={v.id === fromId}
                  onChange={() => onPick({ from: v.id })}
                  data-testid="diff-from"
                />
              </td>
              <td onClick={(e) => e.stopPropagation()}>
                <input
                  type="radio"
                  name="diff-to"
                  aria-label={`Diff to v${v.version}`}
                  checked={v.id === toId}
                  onChange={() => onPick({ to: v.id })}
                  data-testid="diff-to"
                />
              </td>
              <td className="num">v{v.version}</td>
              <td>
                <ChangeReportBadge report={reports.get(v.id)} />
              </td>
              <td>
                <HashPrefix hash={v.contentHash} />
              </td>
              <td className={`mono ${styles.cause}`}>{v.cause}</td>
              <td>{v.actor}</td>
              <td className={styles.reason} title={v.reason}>
                {v.reason || <span className="muted">—</span>}
              </td>
              <td>
                <UtcTime iso={v.createdAt} />
              </td>
              <td>
                <Link
                  href={`/pools/${poolId}/table?version=${v.version}`}
                  onClick={(e) => e.stopPropagation()}
                >
                  table
                </Link>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
