import type { PoolSummary } from "@tide/contracts";
import styles from "./fleet.module.css";

const states = ["active", "draining", "inactive", "filling"] as const;

/** "12 active · 1 draining · 0 inactive · 0 filling": zeros fade so the odd state stands out. */
export function ProxyCounts({ counts }: { counts: PoolSummary["proxyCounts"] }) {
  return (
    <span className={styles.counts}>
      {states.map((s) => (
        <span
          key={s}
          className={`${styles.count} ${counts[s] === 0 ? styles.zero : styles[s]}`}
          title={`${counts[s]} ${s}`}
          data-testid={`count-${s}`}
        >
          {counts[s]} <span className="muted">{s}</span>
        </span>
      ))}
    </span>
  );
}
