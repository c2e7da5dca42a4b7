import type { TableDiff } from "@tide/contracts";
import { backendBackground, backendColor } from "~/components/proxy-colors";
import { ShareChart } from "~/components/share-chart";
import { ChangedRows } from "./changed-rows";
import { DiffStats } from "./diff-stats";
import { ShareTable } from "./share-table";
import styles from "./table-diff.module.css";

/** What a table change does: rows moved, each proxy's share before/after, the first changed rows. */
export function TableDiffView({ diff }: { diff: TableDiff }) {
  // Chart the column that moves: primary for drain/fill, secondary when only second-chance hops change.
  const column = diff.rowsPrimaryChanged >= diff.rowsSecondaryChanged ? "primary" : "secondary";
  return (
    <section data-testid="table-diff" aria-label="Table diff">
      <DiffStats diff={diff} />
      <div className={styles.columns}>
        {/* Focusable: on a narrow screen it scrolls sideways, and keyboards must reach that too. */}
        <div
          className={styles.shareTable}
          tabIndex={0}
          role="region"
          aria-label="Rows per proxy, before and after"
        >
          <ShareTable shares={diff.shares} />
        </div>
        <ShareChart
          title={`${column === "primary" ? "Primary" : "Secondary"} rows per proxy, before (faded) and after`}
          hostnames={diff.shares.map((s) => s.hostname)}
          colors={diff.shares.map((_, i) => backendColor(i))}
          backgrounds={diff.shares.map((_, i) => backendBackground(i))}
          series={[
            { name: `${column} before`, values: diff.shares.map((s) => s.before[column]), look: "faded" },
            { name: `${column} after`, values: diff.shares.map((s) => s.after[column]), look: "solid" },
          ]}
        />
      </div>
      <ChangedRows diff={diff} />
    </section>
  );
}
