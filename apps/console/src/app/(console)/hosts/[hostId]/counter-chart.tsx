import type { LivePoint } from "@tide/api";
import styles from "../hosts.module.css";
import { CHART_HEIGHT as HEIGHT, CHART_PAD as PAD, CHART_WIDTH as WIDTH, formatRate } from "./chart-scale";

/**
 * The counter's rate over the points' whole span (increase / seconds, gaps left out) and that span:
 * the same measure a finding states ("10.0/s over the last 29 s"), so the two can be compared.
 */
export function windowRate(
  points: readonly LivePoint[],
  counter: string,
): { perSecond: number | null; seconds: number } {
  let increase = 0;
  let seconds = 0;
  for (let i = 1; i < points.length; i++) {
    const rate = points[i]!.rates[counter];
    const dt = (Date.parse(points[i]!.at) - Date.parse(points[i - 1]!.at)) / 1000;
    if (rate === null || rate === undefined || !(dt > 0)) continue;
    increase += rate * dt;
    seconds += dt;
  }
  return { perSecond: seconds > 0 ? increase / seconds : null, seconds: Math.round(seconds) };
}

/**
 * Per-second rate of one counter as a small line chart (same look as the console's other SVG
 * charts: theme variables, a <title> for screen readers and tooltips). Gaps (resets, missing
 * counters) break the line rather than drawing zeros.
 */
export function CounterChart({ counter, points }: { counter: string; points: readonly LivePoint[] }) {
  const values = points.map((p) => p.rates[counter] ?? null);
  const latest = values.length ? (values[values.length - 1] ?? null) : null;
  const max = Math.max(1, ...values.map((v) => v ?? 0));
  const n = Math.max(points.length - 1, 1);
  const segments: string[] = [];
  let current = "";
  values.forEach((v, i) => {
    if (v === null) {
      if (current) segments.push(current);
      current = "";
      return;
    }
    const x = PAD + (i / n) * (WIDTH - 2 * PAD);
    const y = HEIGHT - PAD - (v / max) * (HEIGHT - 2 * PAD);
    current += `${current ? " L" : "M"}${x.toFixed(1)},${y.toFixed(1)}`;
  });
  if (current) segments.push(current);
  const hot = values.some((v) => (v ?? 0) > 0);
  const label = counter.replace(/^TcpExt/, "");
  const overall = windowRate(points, counter);
  return (
    <figure
      className={styles.chart}
      style={{ margin: 0 }}
      data-testid="counter-chart"
      data-counter={counter}
      data-points={points.length}
      data-latest={latest ?? ""}
      data-window-seconds={overall.seconds}
    >
      <figcaption className={styles.chartHead}>
        <span title={counter}>{label}</span>
        <span className={(latest ?? 0) > 0 ? styles.hot : "muted"} data-testid="counter-latest">
          {formatRate(latest)}
        </span>
      </figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        width="100%"
        height={HEIGHT}
        preserveAspectRatio="none"
        role="img"
        aria-label={`${counter} per second, last ${points.length} samples, now ${formatRate(latest)}, peak ${formatRate(hot ? max : 0)}`}
        style={{ display: "block" }}
      >
        <title>{`${counter}: now ${formatRate(latest)}, peak ${formatRate(hot ? max : 0)}`}</title>
        <line x1={0} x2={WIDTH} y1={HEIGHT - PAD} y2={HEIGHT - PAD} stroke="var(--border)" />
        {segments.map((d, i) => (
          <path
            key={i}
            d={d}
            fill="none"
            stroke={hot ? "var(--danger)" : "var(--text-faint)"}
            strokeWidth={1.5}
            vectorEffect="non-scaling-stroke"
          />
        ))}
      </svg>
      <span className="muted" style={{ fontSize: 11 }}>
        peak {formatRate(hot ? max : 0)}
        {overall.perSecond !== null && (
          <>
            {" · "}
            <span data-testid="counter-average">{formatRate(overall.perSecond)}</span> over the last{" "}
            {overall.seconds} s
          </>
        )}
      </span>
    </figure>
  );
}
