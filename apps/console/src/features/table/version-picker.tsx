"use client";

import type { TableVersionSummary } from "@tide/contracts";
import styles from "./forwarding-table.module.css";

/** Pick a table version; the newest is the current one. */
export function VersionPicker({
  versions,
  value,
  onChange,
}: {
  versions: TableVersionSummary[];
  value: number;
  onChange: (version: number) => void;
}) {
  return (
    <label className={styles.versionLabel}>
      Version
      <select
        value={value}
        onChange={(e) => onChange(Number(e.target.value))}
        className={styles.versionSelect}
        data-testid="version-picker"
      >
        {versions.map((v, i) => (
          <option key={v.id} value={v.version}>
            v{v.version} · {v.contentHash.slice(0, 8)} · {v.cause}
            {i === 0 ? " (current)" : ""}
          </option>
        ))}
      </select>
    </label>
  );
}
