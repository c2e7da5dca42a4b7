import type { FindingSeverity } from "@tide/contracts";
import styles from "./findings.module.css";

/** Severity as a coloured word (never colour alone); null means no live finding. */
export function SeverityBadge({ severity }: { severity: FindingSeverity | null }) {
  return (
    <span
      className={`${styles.badge} ${severity ? styles[severity] : styles.ok}`}
      data-testid="severity"
      data-severity={severity ?? "ok"}
    >
      {severity ?? "ok"}
    </span>
  );
}
