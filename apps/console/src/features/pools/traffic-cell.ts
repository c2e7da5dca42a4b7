import type { ProxyTraffic } from "@tide/contracts";

/** What one rate cell of the proxies table shows. */
export interface RateCellView {
  /** The figure ("12", "0.5"), "—" when unknown, or "late". */
  text: string;
  late: boolean;
  /** The figure is the host's total over every pool (an older tide-redirect or agent). */
  hostWide: boolean;
  /** Tooltip: why it is late, or what a host-wide figure means; undefined = the column's own. */
  title: string | undefined;
}

/** A rate per second: one decimal below 10 (but 0), none above; "—" when unknown. */
export function formatRate(v: number | null | undefined): string {
  return v === null || v === undefined ? "—" : v.toFixed(v < 10 && v > 0 ? 1 : 0);
}

/**
 * A rate cell of proxy `t`: "late" (never a zero followed by a double) while its host's last reading
 * is late and not yet stale (stale figures are "—", like a proxy that never reported), the figure
 * otherwise, marked host-wide when it is not the pool's own.
 */
export function rateCellView(
  t: ProxyTraffic | undefined,
  value: number | null | undefined,
  title?: string,
): RateCellView {
  if (t?.late && !t.stale)
    return { text: "late", late: true, hostWide: false, title: t.lateReason ?? "late" };
  const hostWide = t?.scope === "host" && value !== null && value !== undefined;
  return {
    text: formatRate(value),
    late: false,
    hostWide,
    title: hostWide
      ? `${title ? `${title} ` : ""}(the host's total over every pool: its tide-redirect or agent reports no per-VIP counters)`
      : title,
  };
}
