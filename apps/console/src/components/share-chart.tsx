import { shortHost } from "./short-host";

export interface ShareSeries {
  name: string;
  /** One value per proxy (rows, of 65,536). */
  values: readonly number[];
  /** solid: the proxy's colour; faded: the same colour, lighter (e.g. "before"). */
  look: "solid" | "faded";
}

const LABEL_W = 110;
const VALUE_W = 92;
const BAR_H = 7;
const BAR_GAP = 2;
const GROUP_GAP = 6;
const LEGEND_H = 18;
const WIDTH = 520;
const TABLE_ROWS = 65_536;

function percent(v: number): string {
  return `${((v / TABLE_ROWS) * 100).toFixed(1)}%`;
}

/**
 * Horizontal bars: one group per proxy, one bar per series (primary/secondary, or before/after).
 * Bars scale to the largest value; the dashed line marks an even share of the first series among
 * the proxies that hold rows in it. Drawn at its natural size, shrunk only when space is short.
 */
export function ShareChart({
  hostnames,
  colors,
  series,
  title,
}: {
  hostnames: readonly string[];
  colors: readonly string[];
  series: readonly ShareSeries[];
  title: string;
}) {
  const max = Math.max(1, ...series.flatMap((s) => s.values));
  const groupH = series.length * (BAR_H + BAR_GAP) - BAR_GAP;
  const barsH = hostnames.length * (groupH + GROUP_GAP);
  const height = barsH + LEGEND_H;
  const barW = WIDTH - LABEL_W - VALUE_W;
  const holders = series[0]?.values.filter((v) => v > 0).length ?? 0;
  const fairX = holders > 0 ? LABEL_W + (TABLE_ROWS / holders / max) * barW : null;

  return (
    <svg
      viewBox={`0 0 ${WIDTH} ${height}`}
      width={WIDTH}
      height={height}
      style={{ maxWidth: "100%", height: "auto", display: "block" }}
      role="img"
      aria-label={title}
      fontSize={10}
      data-testid="share-chart"
    >
      <title>{title}</title>
      {hostnames.map((hostname, i) => {
        const y0 = i * (groupH + GROUP_GAP);
        return (
          <g key={hostname}>
            <text x={LABEL_W - 6} y={y0 + groupH / 2 + 3.5} textAnchor="end" fill="var(--text-muted)">
              {shortHost(hostname)}
            </text>
            {series.map((s, j) => {
              const v = s.values[i] ?? 0;
              const y = y0 + j * (BAR_H + BAR_GAP);
              return (
                <g key={s.name}>
                  <rect
                    x={LABEL_W}
                    y={y}
                    width={Math.max(v > 0 ? 1 : 0, (v / max) * barW)}
                    height={BAR_H}
                    fill={colors[i] ?? "var(--accent)"}
                    opacity={s.look === "faded" ? 0.4 : 1}
                  >
                    <title>{`${hostname} ${s.name}: ${v} rows (${percent(v)})`}</title>
                  </rect>
                  <text
                    x={WIDTH - VALUE_W + 6}
                    y={y + BAR_H - 0.5}
                    fontSize={8.5}
                    fill="var(--text-muted)"
                    fontFamily="var(--font-mono)"
                  >
                    {`${v.toString().padStart(5, "\u2007")} ${percent(v).padStart(5, "\u2007")}`}
                  </text>
                </g>
              );
            })}
          </g>
        );
      })}
      {fairX !== null && fairX <= LABEL_W + barW && (
        <line x1={fairX} x2={fairX} y1={0} y2={barsH} stroke="var(--text-faint)" strokeDasharray="3 3">
          <title>even share</title>
        </line>
      )}
      <g transform={`translate(${LABEL_W}, ${barsH + 6})`} fill="var(--text-muted)">
        {series.map((s, j) => (
          <g key={s.name} transform={`translate(${j * 120}, 0)`}>
            <rect width={10} height={BAR_H} fill="var(--text-muted)" opacity={s.look === "faded" ? 0.4 : 1} />
            <text x={14} y={BAR_H}>
              {s.name}
            </text>
          </g>
        ))}
        <line
          x1={series.length * 120}
          x2={series.length * 120 + 10}
          y1={4}
          y2={4}
          stroke="var(--text-faint)"
          strokeDasharray="3 3"
        />
        <text x={series.length * 120 + 14} y={BAR_H}>
          even share
        </text>
      </g>
    </svg>
  );
}
