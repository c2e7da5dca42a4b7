/**
 * SVG paths of a history chart, from per-bucket arrays with nulls for gaps: a line through the
 * averages and a band from each bucket's min to its max. Both break at every gap (a null bucket),
 * so no data is never drawn as zero or bridged.
 */

export interface ChartBox {
  width: number;
  height: number;
  pad: number;
}

const fmt = (v: number) => v.toFixed(1);

/** Runs of consecutive non-null buckets, as [first, last] indexes. */
export function runsOf(values: readonly (number | null)[]): [number, number][] {
  const runs: [number, number][] = [];
  let start = -1;
  values.forEach((v, i) => {
    if (v !== null && start < 0) start = i;
    if (v === null && start >= 0) {
      runs.push([start, i - 1]);
      start = -1;
    }
  });
  if (start >= 0) runs.push([start, values.length - 1]);
  return runs;
}

export function historyPaths(
  series: {
    min: readonly (number | null)[];
    avg: readonly (number | null)[];
    max: readonly (number | null)[];
  },
  box: ChartBox,
): { line: string; band: string; peak: number; gaps: number } {
  const n = series.avg.length;
  const peak = Math.max(0, ...series.max.map((v) => v ?? 0));
  const scale = Math.max(1, peak);
  const x = (i: number) => box.pad + (n > 1 ? i / (n - 1) : 0.5) * (box.width - 2 * box.pad);
  const y = (v: number) => box.height - box.pad - (v / scale) * (box.height - 2 * box.pad);
  const runs = runsOf(series.avg);
  const line: string[] = [];
  const band: string[] = [];
  for (const [a, b] of runs) {
    const pts: string[] = [];
    for (let i = a; i <= b; i++) pts.push(`${fmt(x(i))},${fmt(y(series.avg[i]!))}`);
    // A lone bucket is a short tick, so a single point between gaps still shows.
    line.push(a === b ? `M${fmt(x(a) - 1)},${fmt(y(series.avg[a]!))} h2` : `M${pts.join(" L")}`);
    const top: string[] = [];
    const bottom: string[] = [];
    for (let i = a; i <= b; i++) top.push(`${fmt(x(i))},${fmt(y(series.max[i] ?? series.avg[i]!))}`);
    for (let i = b; i >= a; i--) bottom.push(`${fmt(x(i))},${fmt(y(series.min[i] ?? series.avg[i]!))}`);
    band.push(`M${top.join(" L")} L${bottom.join(" L")} Z`);
  }
  const gaps = runsOf(series.avg.map((v) => (v === null ? 0 : null))).length;
  return { line: line.join(" "), band: band.join(" "), peak, gaps };
}
