import type { RouterOutputs } from "~/trpc/types";
import styles from "../hosts.module.css";
import { CHART_HEIGHT as HEIGHT, CHART_PAD as PAD, CHART_WIDTH as WIDTH, formatRate } from "./chart-scale";
import { historyPaths } from "./history-chart-path";

type CounterHistory = RouterOutputs["hosts"]["history"]["namespaces"][number]["series"][number];

/**
 * One counter's rate over a range: the average as a line, and (when a bucket holds several rates:
 * rollups, or samples in buckets) the min–max band behind it. Gaps break both, as the live charts
 * do; the caption gives the peak and the average over the buckets with data.
 */
export function HistoryChart({ series, band }: { series: CounterHistory; band: boolean }) {
  const paths = historyPaths(series, { width: WIDTH, height: HEIGHT, pad: PAD });
  const present = series.avg.filter((v): v is number => v !== null);
  const mean = present.length > 0 ? present.reduce((a, b) => a + b, 0) / present.length : null;
  const hot = paths.peak > 0;
  const label = series.counter.replace(/^TcpExt/, "");
  return (
    <figure
      className={styles.chart}
      style={{ margin: 0 }}
      data-testid="history-chart"
      data-counter={series.counter}
      data-points={series.avg.length}
      data-present={present.length}
      data-gaps={paths.gaps}
    >
      <figcaption className={styles.chartHead}>
        <span title={series.counter}>{label}</span>
        <span className={hot ? styles.hot : "muted"} data-testid="history-peak">
          peak {formatRate(hot ? paths.peak : 0)}
        </span>
      </figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        width="100%"
        height={HEIGHT}
        preserveAspectRatio="none"
        role="img"
        aria-label={`${series.counter} per second over the range: average ${formatRate(mean)}, peak ${formatRate(paths.peak)}, ${paths.gaps} gap${paths.gaps === 1 ? "" : "s"}`}
        style={{ display: "block" }}
      >
        <title>{`${series.counter}: average ${formatRate(mean)}, peak ${formatRate(paths.peak)}`}</title>
        <line x1={0} x2={WIDTH} y1={HEIGHT - PAD} y2={HEIGHT - PAD} stroke="var(--border)" />
        {band && paths.band && (
          <path
            d={paths.band}
            fill={hot ? "var(--danger)" : "var(--text-faint)"}
            fillOpacity={0.2}
            stroke="none"
            data-testid="history-band"
          />
        )}
        {paths.line && (
          <path
            d={paths.line}
            fill="none"
            stroke={hot ? "var(--danger)" : "var(--text-faint)"}
            strokeWidth={1.5}
            vectorEffect="non-scaling-stroke"
          />
        )}
      </svg>
      <span className="muted" style={{ fontSize: 11 }}>
        average <span data-testid="history-average">{formatRate(mean)}</span>
        {paths.gaps > 0 && ` · ${paths.gaps} gap${paths.gaps === 1 ? "" : "s"}`}
      </span>
    </figure>
  );
}
