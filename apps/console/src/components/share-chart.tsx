import type { CSSProperties } from "react";
import { deviations, formatDeviation, TABLE_ROWS } from "./share-deviation";
import { shortHost } from "./short-host";
import styles from "./share-chart.module.css";

export interface ShareSeries {
  name: string;
  /** One value per proxy (rows, of 65,536). */
  values: readonly number[];
  /** solid: the proxy's colour; faded: the same colour, lighter (e.g. "before"). */
  look: "solid" | "faded";
}

/** Bars never scale below ±2%: a near-perfect spread should look near-even, not dramatic. */
const MIN_SCALE = 0.02;

const percent = (rows: number) => `${((rows / TABLE_ROWS) * 100).toFixed(1)}%`;

/**
 * Each proxy's rows as the deviation from an even share (the centre line): a bar to the right is
 * more than its share, to the left less. One bar per series (primary/secondary, or before/after),
 * each against the even share among the proxies holding rows in that series. Laid out in HTML so
 * the labels keep their size at any width.
 */
export function ShareChart({
  hostnames,
  colors,
  backgrounds,
  series,
  title,
}: {
  hostnames: readonly string[];
  colors: readonly string[];
  /** CSS backgrounds per proxy (e.g. striped beyond 16 proxies); colors are used when absent. */
  backgrounds?: readonly string[];
  series: readonly ShareSeries[];
  title: string;
}) {
  const perSeries = series.map((s) => deviations(s.values));
  const scale = Math.max(
    MIN_SCALE,
    ...perSeries.flatMap((d) => d.items.map((x) => Math.abs(x.deviation ?? 0))),
  );
  return (
    <figure className={styles.chart} data-testid="share-chart" aria-label={title}>
      <figcaption className={styles.caption}>
        {title}: deviation from an even share (centre line), scale ±{(scale * 100).toFixed(1)}%
      </figcaption>
      <div className={styles.rows} role="list">
        {hostnames.map((hostname, i) => {
          const swatch: CSSProperties = { background: backgrounds?.[i] ?? colors[i] ?? "var(--accent)" };
          return (
            <div
              key={`${hostname}-${i}`}
              className={styles.row}
              role="listitem"
              data-testid="share-chart-row"
            >
              <span className={styles.name} title={hostname}>
                <span className={styles.swatch} style={swatch} aria-hidden="true" />
                {shortHost(hostname)}
              </span>
              <span className={styles.bars}>
                {series.map((s, j) => {
                  const d = perSeries[j]!.items[i]!;
                  const dev = d.deviation;
                  const width = dev === null ? 0 : (Math.abs(dev) / scale) * 50;
                  const bar: CSSProperties = {
                    background: colors[i] ?? "var(--accent)",
                    opacity: s.look === "faded" ? 0.45 : 1,
                    width: `${width}%`,
                    left: dev !== null && dev < 0 ? `${50 - width}%` : "50%",
                  };
                  return (
                    <span
                      key={s.name}
                      className={styles.track}
                      title={`${hostname} ${s.name}: ${d.rows.toLocaleString("en-US")} rows (${percent(d.rows)})${
                        dev === null ? ", none" : `, ${formatDeviation(dev)} against an even share`
                      }`}
                    >
                      {dev !== null && <span className={styles.bar} style={bar} />}
                    </span>
                  );
                })}
              </span>
              <span className={styles.values}>
                {series.map((s, j) => {
                  const d = perSeries[j]!.items[i]!;
                  return (
                    <span key={s.name} className={s.look === "faded" ? styles.faded : undefined}>
                      {d.deviation === null ? "no rows" : formatDeviation(d.deviation)}{" "}
                      <span className={styles.rowsText}>{d.rows.toLocaleString("en-US")}</span>
                    </span>
                  );
                })}
              </span>
            </div>
          );
        })}
      </div>
      <div className={styles.legend} aria-hidden="true">
        {series.map((s) => (
          <span key={s.name}>
            <span className={styles.legendKey} style={{ opacity: s.look === "faded" ? 0.45 : 1 }} />
            {s.name}
          </span>
        ))}
        <span>
          <span className={styles.legendEven} />
          even share
        </span>
      </div>
    </figure>
  );
}
