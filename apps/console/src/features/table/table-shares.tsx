"use client";

import { backendBackground, backendColor } from "~/components/proxy-colors";
import { shortHost } from "~/components/short-host";
import { ShareChart } from "~/components/share-chart";
import { StateBadge } from "~/components/state-badge";
import styles from "./forwarding-table.module.css";
import type { TableBackend } from "./table-backend";

/**
 * Rows per proxy as primary and secondary: a legend (click a proxy to filter the rows to it) and
 * a bar chart.
 */
export function TableShares({
  backends,
  primaryCounts,
  secondaryCounts,
  selectedSlot,
  onSelect,
}: {
  backends: readonly TableBackend[];
  primaryCounts: readonly number[];
  secondaryCounts: readonly number[];
  selectedSlot: number | null;
  onSelect: (slot: number | null) => void;
}) {
  return (
    <section className="panel" aria-labelledby="shares-heading">
      <header>
        <h2 id="shares-heading">Share per proxy</h2>
      </header>
      <table className="data" data-testid="table-shares">
        <thead>
          <tr>
            <th>Proxy</th>
            <th>State</th>
            <th className="num">Primary</th>
            <th className="num">Secondary</th>
          </tr>
        </thead>
        <tbody>
          {backends.map((b) => (
            <tr
              key={b.slot}
              className={`${styles.legendRow} ${selectedSlot === b.slot ? styles.legendSelected : ""}`}
              onClick={() => onSelect(selectedSlot === b.slot ? null : b.slot)}
              data-testid="share-legend-row"
              title={`${b.hostname} ${b.address}: click to show only its rows`}
              data-address={b.address}
            >
              <td className={styles.shareName}>
                <span className={styles.cell}>
                  <span
                    className={styles.swatch}
                    style={{ background: backendBackground(b.slot) }}
                    aria-hidden="true"
                  />
                  {shortHost(b.hostname)}
                </span>
              </td>
              <td>
                <StateBadge state={b.state} />
              </td>
              <td className="num">{primaryCounts[b.slot] ?? 0}</td>
              <td className="num">{secondaryCounts[b.slot] ?? 0}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="body">
        <ShareChart
          title="Rows per proxy: primary (solid) and secondary (faded)"
          hostnames={backends.map((b) => b.hostname)}
          colors={backends.map((b) => backendColor(b.slot))}
          backgrounds={backends.map((b) => backendBackground(b.slot))}
          series={[
            { name: "primary", values: backends.map((b) => primaryCounts[b.slot] ?? 0), look: "solid" },
            { name: "secondary", values: backends.map((b) => secondaryCounts[b.slot] ?? 0), look: "faded" },
          ]}
        />
      </div>
    </section>
  );
}
