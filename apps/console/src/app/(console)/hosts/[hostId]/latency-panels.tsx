"use client";

import { useQuery } from "@tanstack/react-query";
import { ErrorNotice } from "~/components/error-notice";
import { useTRPC } from "~/trpc/react";
import styles from "../hosts.module.css";
import { groupConnectLatency } from "./connect-groups";
import { formatUs, LatencyHistogram } from "./latency-histogram";
import { TableScroll } from "~/components/table-scroll";

/** Window of the distributions, in seconds: the same minute the findings' rates use. */
const WINDOW_S = 60;
/** connect() slower than this is the port-exhaustion signature (kernel-signals.md, the port-exhaustion incident). */
const CONNECT_HOT_US = 512;
/** NET_RX runs this long hold up every packet of the CPU (softirq-stall rule: warn above 10 ms). */
const NET_RX_HOT_US = 8192;
/** Commands listed at most; the rest are summed in one line (the API lists up to 50 processes). */
const CONNECT_MAX_ROWS = 10;

function nsLabel(ns: { name: string | null; inode: number; root: boolean } | null): string {
  if (!ns) return "gone";
  return ns.root ? "root" : (ns.name ?? `inode ${ns.inode}`);
}

/**
 * connect() latency per command (short-lived pids of one command grouped, worst first, capped) and NET_RX run times per CPU over the last minute, from the
 * probes' histograms (GET /api/v1/hosts/{id}/latency). Refetched when the live stream says new
 * samples arrived (the host page invalidates the hosts.* queries), never polled.
 */
export function LatencyPanels({ hostId }: { hostId: string }) {
  const trpc = useTRPC();
  const latency = useQuery({
    ...trpc.hosts.latency.queryOptions({ hostId, seconds: WINDOW_S }),
    staleTime: 2_000,
  });
  if (latency.error) return <ErrorNotice error={latency.error} />;
  const l = latency.data;
  const groups = l && groupConnectLatency(l.connect, { slowFromUs: CONNECT_HOT_US, limit: CONNECT_MAX_ROWS });
  return (
    <div className={styles.stack}>
      <section className="panel" aria-labelledby="connect-heading" data-testid="connect-latency">
        <header>
          <h2 id="connect-heading">connect() latency per command</h2>
          <span className="muted">last {WINDOW_S} s</span>
        </header>
        {!l ? (
          <p className="body muted">Loading…</p>
        ) : !l.probes.connectLatency ? (
          <p className="body muted">The connect_latency probe is off on this host (see Probes).</p>
        ) : !groups || groups.shown.length === 0 ? (
          <p className="body muted">No connect() calls in the last {WINDOW_S} s.</p>
        ) : (
          <TableScroll label="connect() latency per command">
            <table className="data">
              <thead>
                <tr>
                  <th>Command</th>
                  <th>Namespace</th>
                  <th className="num">Calls/s</th>
                  <th className="num">p50</th>
                  <th className="num">p99</th>
                  <th className="num" title="connect() failed: no free source port">
                    EADDRNOTAVAIL
                  </th>
                  <th className="num" title="Share of new connections on odd source ports">
                    Odd ports
                  </th>
                  <th>Distribution</th>
                </tr>
              </thead>
              <tbody>
                {groups.shown.map((c) => {
                  const ports = c.evenPorts + c.oddPorts;
                  const who =
                    c.pids.length === 1 ? `${c.comm} ${c.pids[0]}` : `${c.comm} (${c.pids.length} pids)`;
                  return (
                    <tr
                      key={c.key}
                      data-testid="connect-row"
                      data-comm={c.comm}
                      data-pid={c.pids.length === 1 ? c.pids[0] : undefined}
                    >
                      <td className="mono" title={`pid ${c.pids.join(", ")}`}>
                        {c.comm}{" "}
                        <span className="muted">
                          {c.pids.length === 1 ? c.pids[0] : `${c.pids.length} pids`}
                        </span>
                      </td>
                      <td className="mono">{nsLabel(c.netns)}</td>
                      <td className="num">{c.perSecond.toFixed(1)}</td>
                      <td className="num">{formatUs(c.p50Us)}</td>
                      <td className={`num ${(c.p99Us ?? 0) >= CONNECT_HOT_US ? styles.hot : ""}`}>
                        {formatUs(c.p99Us)}
                      </td>
                      <td className={`num ${c.eaddrnotavail > 0 ? styles.hot : ""}`}>{c.eaddrnotavail}</td>
                      <td className="num">
                        {ports === 0 ? "—" : `${Math.round((100 * c.oddPorts) / ports)}%`}
                      </td>
                      <td className={styles.histogramCell}>
                        <LatencyHistogram
                          buckets={c.buckets}
                          label={`connect() latency of ${who}`}
                          hotFromUs={CONNECT_HOT_US}
                        />
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
            {groups.hidden.groups > 0 && (
              <p className="body muted" data-testid="connect-more">
                {groups.hidden.groups} more command{groups.hidden.groups === 1 ? "" : "s"} (
                {groups.hidden.pids} pid{groups.hidden.pids === 1 ? "" : "s"},{" "}
                {groups.hidden.calls.toLocaleString("en-US")} calls, {groups.hidden.slowCalls} slow,{" "}
                {groups.hidden.eaddrnotavail} EADDRNOTAVAIL) not listed: they have fewer slow or failed calls.
              </p>
            )}
          </TableScroll>
        )}
      </section>
      <section className="panel" aria-labelledby="netrx-heading" data-testid="netrx-latency">
        <header>
          <h2 id="netrx-heading">NET_RX softirq run time per CPU</h2>
          <span className="muted">last {WINDOW_S} s</span>
        </header>
        {!l ? (
          <p className="body muted">Loading…</p>
        ) : !l.probes.netRxSoftirq ? (
          <p className="body muted">The net_rx_softirq probe is off on this host (see Probes).</p>
        ) : l.netRx.length === 0 ? (
          <p className="body muted">No NET_RX runs in the last {WINDOW_S} s.</p>
        ) : (
          <TableScroll label="NET_RX softirq run time per CPU">
            <table className="data">
              <thead>
                <tr>
                  <th className="num">CPU</th>
                  <th className="num">Runs</th>
                  <th className="num">p50</th>
                  <th className="num">p99</th>
                  <th className="num">Longest</th>
                  <th>Distribution</th>
                </tr>
              </thead>
              <tbody>
                {l.netRx.map((c) => (
                  <tr key={c.cpu} data-testid="netrx-row" data-cpu={c.cpu}>
                    <td className="num">{c.cpu}</td>
                    <td className="num">{c.runs.toLocaleString("en-US")}</td>
                    <td className="num">{formatUs(c.p50Us)}</td>
                    <td className="num">{formatUs(c.p99Us)}</td>
                    <td className={`num ${(c.maxUs ?? 0) >= NET_RX_HOT_US ? styles.hot : ""}`}>
                      {formatUs(c.maxUs)}
                    </td>
                    <td className={styles.histogramCell}>
                      <LatencyHistogram
                        buckets={c.buckets}
                        label={`NET_RX run times on CPU ${c.cpu}`}
                        hotFromUs={NET_RX_HOT_US}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </section>
    </div>
  );
}
