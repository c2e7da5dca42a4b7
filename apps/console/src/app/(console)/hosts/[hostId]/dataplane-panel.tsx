"use client";

import type { HostLiveUpdate, LivePoint } from "@tide/api";
import type { DataPlaneState } from "@tide/contracts";
import { useEffect, useRef, useState } from "react";
import styles from "../hosts.module.css";
import { CounterChart } from "./counter-chart";
import { perS } from "./host-sections";
import { DirectorHostSync } from "~/features/sync/director-host-sync";
import { TableScroll } from "~/components/table-scroll";

/** Points kept per component: five minutes of one-second batches. */
const MAX_POINTS = 300;

/** Charted first, in this order; every counter is in the table below the charts. */
const CHARTED: Record<DataPlaneState["component"], string[]> = {
  director: ["rx_packets", "forwarded_packets", "dropped", "tx_failed", "forwarded_icmp_pmtu"],
  redirect: [
    "total",
    "accepted_established",
    "accepted_syn",
    "forwarded_to_alternate",
    "accepted_syn_cookie",
    "dropped",
  ],
};

const TITLES: Record<DataPlaneState["component"], string> = {
  director: "tide-director",
  redirect: "tide-redirect (second chance)",
};

const key = (d: DataPlaneState) => `${d.component}:${d.socket}`;

/**
 * Counters of one component, flattened (director `dropped.no_bind` -> `dropped_no_bind`) plus a
 * `dropped` total over every drop reason, so one chart shows whether anything is being lost.
 */
export function flatCounters(d: DataPlaneState): Record<string, number> {
  const out: Record<string, number> = {};
  let dropped = 0;
  if (d.directorCounters) {
    const { dropped: reasons, ...rest } = d.directorCounters;
    Object.assign(out, rest);
    for (const [reason, v] of Object.entries(reasons)) {
      out[`dropped_${reason}`] = v;
      dropped += v;
    }
    out.dropped = dropped;
  } else if (d.redirectCounters) {
    Object.assign(out, d.redirectCounters);
    const c = d.redirectCounters;
    out.dropped = c.dropped_malformed + c.dropped_truncated + c.forward_failed + c.decap_failed;
  }
  return out;
}

interface History {
  last: { at: number; values: Record<string, number> } | null;
  points: LivePoint[];
}

/**
 * Per-second packet rates of the local director / tide-redirect, from the absolute counters the
 * agent sends with every batch (the live stream pushes them; the browser keeps the differences).
 * A counter that went down (the daemon restarted) has no rate for that interval.
 */
function useDataPlaneRates(view: HostLiveUpdate): Map<string, LivePoint[]> {
  const history = useRef(new Map<string, History>());
  const [points, setPoints] = useState(new Map<string, LivePoint[]>());
  useEffect(() => {
    if (!view.sampledAt) return;
    const at = Date.parse(view.sampledAt);
    const next = new Map<string, LivePoint[]>();
    for (const d of view.dataPlane) {
      const k = key(d);
      const h = history.current.get(k) ?? { last: null, points: [] };
      if (h.last && at <= h.last.at) {
        next.set(k, h.points);
        continue;
      }
      const values = d.reachable ? flatCounters(d) : {};
      const dt = h.last ? (at - h.last.at) / 1000 : 0;
      const rates: Record<string, number | null> = {};
      for (const [name, v] of Object.entries(values)) {
        const p = h.last?.values[name];
        rates[name] = p !== undefined && dt > 0 && v >= p ? (v - p) / dt : null;
      }
      h.points = [...h.points, { at: view.sampledAt, rates }].slice(-MAX_POINTS);
      h.last = { at, values };
      history.current.set(k, h);
      next.set(k, h.points);
    }
    setPoints(next);
  }, [view.sampledAt, view.dataPlane]);
  return points;
}

/** The host's data plane: one panel per director / tide-redirect with live rate charts and every counter. */
export function DataPlanePanels({ view }: { view: HostLiveUpdate }) {
  const rates = useDataPlaneRates(view);
  if (view.dataPlane.length === 0)
    return <p className="muted">No data plane components on this host (tide-director, tide-redirect).</p>;
  return (
    <>
      {view.dataPlane.map((d) => {
        const k = key(d);
        const points = rates.get(k) ?? [];
        const latest = points[points.length - 1]?.rates ?? {};
        const values = d.reachable ? flatCounters(d) : {};
        const headingId = `dp-${d.component}-${k.replace(/[^A-Za-z0-9_-]/g, "-")}`;
        return (
          <section
            key={k}
            id={d.component}
            className="panel"
            aria-labelledby={headingId}
            data-testid="dataplane-component"
            data-component={d.component}
            data-reachable={d.reachable}
          >
            {/* Wraps on a phone: the socket path alone is most of 390 px. */}
            <header className={styles.headWrap}>
              <h2 id={headingId}>{TITLES[d.component]}</h2>
              {d.reachable ? (
                <span className={styles.on}>reachable</span>
              ) : (
                <span className={styles.off}>unreachable{d.error ? `: ${d.error}` : ""}</span>
              )}
              <span className="muted mono">{d.socket}</span>
              <span className="muted mono">{d.version ?? ""}</span>
            </header>
            <div className={`body ${styles.nsBody}`}>
              {d.component === "director" && (
                <DirectorHostSync hostname={view.hostName} tableHashes={d.tableHashes} />
              )}
              {d.reachable && (
                <>
                  <div className={styles.charts}>
                    {CHARTED[d.component].map((c) => (
                      <CounterChart key={c} counter={c} points={points} />
                    ))}
                  </div>
                  <TableScroll label={`${TITLES[d.component]} counters`}>
                    <table className="data" data-testid="dataplane-counters">
                      <thead>
                        <tr>
                          <th>Counter</th>
                          <th className="num">Total</th>
                          <th className="num">Now</th>
                        </tr>
                      </thead>
                      <tbody>
                        {Object.entries(values).map(([name, v]) => (
                          <tr key={name} data-testid="dataplane-counter" data-counter={name}>
                            <td className="mono">{name}</td>
                            <td className="num">{v.toLocaleString("en-US")}</td>
                            <td
                              className={`num ${name.startsWith("drop") && (latest[name] ?? 0) > 0 ? styles.hot : ""}`}
                            >
                              {perS(latest[name])}
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </TableScroll>
                </>
              )}
            </div>
          </section>
        );
      })}
    </>
  );
}
