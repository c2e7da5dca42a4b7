import type { TableDiff } from "@tide/contracts";
import { backendBackground } from "~/components/proxy-colors";
import { shortHost } from "~/components/short-host";
import styles from "./table-diff.module.css";

function Delta({ before, after }: { before: number; after: number }) {
  const d = after - before;
  if (d === 0) return <span className="muted">±0</span>;
  return <span className={d > 0 ? styles.up : styles.down}>{d > 0 ? `+${d}` : d}</span>;
}

/** Rows per proxy, of 65,536, before and after. */
export function ShareTable({ shares }: { shares: TableDiff["shares"] }) {
  return (
    <table className="data" data-testid="share-table">
      <thead>
        <tr>
          <th>Proxy</th>
          <th className="num">Primary before</th>
          <th className="num">after</th>
          <th className="num">Δ</th>
          <th className="num">Secondary before</th>
          <th className="num">after</th>
          <th className="num">Δ</th>
        </tr>
      </thead>
      <tbody>
        {shares.map((s, i) => (
          <tr key={s.address} data-testid="share-row" data-address={s.address}>
            <td title={`${s.hostname} ${s.address}`} className={styles.shareName}>
              <span
                className={styles.swatch}
                style={{ background: backendBackground(i) }}
                aria-hidden="true"
              />
              {shortHost(s.hostname)} <span className="mono muted">{s.address}</span>
            </td>
            <td className="num">{s.before.primary}</td>
            <td className="num">{s.after.primary}</td>
            <td className="num">
              <Delta before={s.before.primary} after={s.after.primary} />
            </td>
            <td className="num">{s.before.secondary}</td>
            <td className="num">{s.after.secondary}</td>
            <td className="num">
              <Delta before={s.before.secondary} after={s.after.secondary} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
