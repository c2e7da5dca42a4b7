import type { ChangeReport } from "@tide/contracts";
import { badgeOf } from "./change-report-text";
import styles from "./change-report.module.css";

/**
 * A version's change report in a few words: "measuring since 09:51:02", "closing…", "0 broken"
 * (ok), "3 broken" (danger), "unknown" (muted; the reasons on hover), "—" without a report.
 * `report` undefined: not read yet (nothing shown).
 */
export function ChangeReportBadge({ report }: { report: ChangeReport | null | undefined }) {
  if (report === undefined) return null;
  const b = badgeOf(report);
  return (
    <span
      className={`${styles.badge} ${styles[b.tone]}`}
      title={b.title}
      data-testid="change-report-badge"
      data-status={report?.status ?? "none"}
      data-verdict={report?.report?.verdict ?? ""}
    >
      {b.text}
    </span>
  );
}
