import styles from "../hosts.module.css";

export interface Bucket {
  loUs: number;
  hiUs: number;
  count: number;
}

const WIDTH = 260;
/** Bar area in px: low enough that a table of ten commands stays a screen tall. */
const HEIGHT = 34;

/** 1 µs, 16 µs, 1.0 ms, 33 ms, 1.0 s. */
export function formatUs(us: number | null): string {
  if (us === null) return "—";
  if (us < 1000) return `${Math.round(us)} µs`;
  if (us < 1_000_000) return `${(us / 1000).toFixed(us < 10_000 ? 1 : 0)} ms`;
  return `${(us / 1_000_000).toFixed(1)} s`;
}

/**
 * A log2 latency histogram as bars from the smallest to the largest non-empty bucket (empty buckets
 * in between keep their place, so a second mode stands apart). Bars above `hotFromUs` are drawn in
 * the danger colour: they are the slow tail the findings talk about.
 */
export function LatencyHistogram({
  buckets,
  label,
  hotFromUs,
}: {
  buckets: readonly Bucket[];
  label: string;
  hotFromUs: number;
}) {
  if (buckets.length === 0) return <span className="muted">no events</span>;
  const first = Math.log2(Math.max(buckets[0]!.hiUs, 2)) - 1;
  const last = Math.log2(buckets[buckets.length - 1]!.hiUs) - 1;
  const slots = Array.from({ length: last - first + 1 }, (_, i) => {
    const hi = 2 ** (first + i + 1);
    return buckets.find((b) => b.hiUs === hi) ?? { loUs: first + i === 0 ? 0 : hi / 2, hiUs: hi, count: 0 };
  });
  const max = Math.max(...slots.map((s) => s.count));
  const w = WIDTH / slots.length;
  const described = slots
    .filter((s) => s.count > 0)
    .map((s) => `${formatUs(s.loUs)}-${formatUs(s.hiUs)}: ${s.count}`)
    .join(", ");
  return (
    <figure className={styles.chart} style={{ margin: 0 }} data-testid="latency-histogram">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT + 12}`}
        width="100%"
        height={HEIGHT + 12}
        role="img"
        aria-label={`${label}: ${described}`}
        style={{ display: "block" }}
      >
        <title>{`${label}: ${described}`}</title>
        {slots.map((s, i) => {
          const h = s.count === 0 ? 0 : Math.max(2, (Math.log1p(s.count) / Math.log1p(max)) * HEIGHT);
          return (
            <rect
              key={s.hiUs}
              x={i * w + 1}
              y={HEIGHT - h}
              width={Math.max(w - 2, 1)}
              height={h}
              fill={s.loUs >= hotFromUs ? "var(--danger)" : "var(--accent)"}
            >
              <title>{`${formatUs(s.loUs)} – ${formatUs(s.hiUs)}: ${s.count.toLocaleString("en-US")}`}</title>
            </rect>
          );
        })}
        <text x={0} y={HEIGHT + 10} fontSize={9} fill="var(--text-muted)">
          {formatUs(slots[0]!.loUs)}
        </text>
        <text x={WIDTH} y={HEIGHT + 10} fontSize={9} fill="var(--text-muted)" textAnchor="end">
          {formatUs(slots[slots.length - 1]!.hiUs)}
        </text>
      </svg>
    </figure>
  );
}
