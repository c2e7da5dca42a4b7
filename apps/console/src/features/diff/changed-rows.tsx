import type { TableDiff } from "@tide/contracts";
import { formatRowHex } from "~/features/table/row-number";
import styles from "./table-diff.module.css";

/** The first changed rows (the server sends up to 500), with the changed cells marked. */
export function ChangedRows({ diff }: { diff: TableDiff }) {
  if (diff.sample.length === 0) return null;
  const more = diff.rowsChanged - diff.sample.length;
  return (
    <details className={styles.sample}>
      <summary>
        First {diff.sample.length} changed rows
        {more > 0 ? ` (of ${diff.rowsChanged.toLocaleString("en-US")})` : ""}
      </summary>
      <div className={styles.sampleScroll} tabIndex={0} role="region" aria-label="Changed rows">
        <table className="data mono" data-testid="changed-rows">
          <thead>
            <tr>
              <th>Row</th>
              <th>Primary before</th>
              <th>after</th>
              <th>Secondary before</th>
              <th>after</th>
            </tr>
          </thead>
          <tbody>
            {diff.sample.map((r) => {
              const p = r.before.primary !== r.after.primary;
              const s = r.before.secondary !== r.after.secondary;
              return (
                <tr key={r.row}>
                  <td>
                    {formatRowHex(r.row)} <span className="muted">{r.row}</span>
                  </td>
                  <td>{r.before.primary}</td>
                  <td className={p ? styles.changed : undefined}>{r.after.primary}</td>
                  <td>{r.before.secondary}</td>
                  <td className={s ? styles.changed : undefined}>{r.after.secondary}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </details>
  );
}
