import type { TableDiff } from "@tide/contracts";
import { backendBackground } from "~/components/proxy-colors";
import { shortHost } from "~/components/short-host";
import styles from "./transition-dialog.module.css";

type Share = TableDiff["shares"][number];

const changes = (s: Share) =>
  s.before.primary !== s.after.primary || s.before.secondary !== s.after.secondary;

function Delta({ before, after }: { before: number; after: number }) {
  const d = after - before;
  if (d === 0) return <span className="muted">±0</span>;
  return <span className={d > 0 ? styles.up : styles.down}>{d > 0 ? `+${d}` : `\u2212${-d}`}</span>;
}

/**
 * Rows per proxy before and after, for the proxies whose rows change only (the others are counted
 * in one line), and only the columns that change (primary, secondary): nothing at all when no
 * proxy's rows change. Scrolls inside the dialog when narrow.
 */
export function PreviewShares({ shares }: { shares: TableDiff["shares"] }) {
  const changed = shares.map((s, i) => ({ s, i })).filter(({ s }) => changes(s));
  if (changed.length === 0) return null;
  const unchanged = shares.length - changed.length;
  const primary = changed.some(({ s }) => s.before.primary !== s.after.primary);
  const secondary = changed.some(({ s }) => s.before.secondary !== s.after.secondary);
  return (
    <div className={styles.shares} tabIndex={0} role="region" aria-label="Rows per proxy">
      <table className="data" data-testid="share-table">
        <thead>
          <tr>
            <th>Proxy</th>
            {primary && (
              <>
                <th className="num">Primary before</th>
                <th className="num">after</th>
                <th className="num">Δ</th>
              </>
            )}
            {secondary && (
              <>
                <th className="num">Secondary before</th>
                <th className="num">after</th>
                <th className="num">Δ</th>
              </>
            )}
          </tr>
        </thead>
        <tbody>
          {changed.map(({ s, i }) => (
            <tr key={s.address} data-testid="share-row" data-address={s.address}>
              <td title={`${s.hostname} ${s.address}`}>
                <span
                  className={styles.swatch}
                  style={{ background: backendBackground(i) }}
                  aria-hidden="true"
                />
                {shortHost(s.hostname)}
              </td>
              {primary && (
                <>
                  <td className="num">{s.before.primary}</td>
                  <td className="num">{s.after.primary}</td>
                  <td className="num">
                    <Delta before={s.before.primary} after={s.after.primary} />
                  </td>
                </>
              )}
              {secondary && (
                <>
                  <td className="num">{s.before.secondary}</td>
                  <td className="num">{s.after.secondary}</td>
                  <td className="num">
                    <Delta before={s.before.secondary} after={s.after.secondary} />
                  </td>
                </>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {(!primary || !secondary) && (
        <p className="muted" data-testid="shares-columns-unchanged">
          No proxy&apos;s {primary ? "secondary" : "primary"} rows change.
        </p>
      )}
      {unchanged > 0 && (
        <p className="muted" data-testid="shares-unchanged">
          {unchanged} other {unchanged === 1 ? "proxy keeps its" : "proxies keep their"} rows.
        </p>
      )}
    </div>
  );
}
