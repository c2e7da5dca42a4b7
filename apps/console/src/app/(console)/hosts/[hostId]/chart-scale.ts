/** The host page's counter charts, live (counter-chart.tsx) and history (history-chart.tsx): one size, one rate format. */
export const CHART_WIDTH = 220;
export const CHART_HEIGHT = 44;
export const CHART_PAD = 2;

/** A rate per second as the charts caption it: "—" for no data, whole numbers from 100/s. */
export function formatRate(v: number | null): string {
  if (v === null) return "—";
  if (v === 0) return "0/s";
  return v >= 100 ? `${Math.round(v)}/s` : `${v.toFixed(1)}/s`;
}
