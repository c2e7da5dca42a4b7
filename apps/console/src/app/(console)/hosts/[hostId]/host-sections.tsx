import type { LiveCpu } from "@tide/api";
import type { BccTool, PmtuPathResult, ProbeAvailability } from "@tide/contracts";
import { UtcTime } from "~/components/time-ago";
import styles from "../hosts.module.css";
import { formatUs } from "./latency-histogram";
import { TableScroll } from "~/components/table-scroll";

/** A per-second rate for tables ("—" when there is none). */
export function perS(v: number | null | undefined): string {
  return v === null || v === undefined
    ? "—"
    : `${v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(1)}/s`;
}

/** softnet_stat and NET_RX softirq rates per CPU (drops and time squeezes are the ones to watch). */
export function CpuTable({ cpus }: { cpus: LiveCpu[] }) {
  if (cpus.length === 0) return <p className="body muted">No per-CPU counters in the latest sample.</p>;
  return (
    <TableScroll label="Softnet and NET_RX per CPU">
      <table className="data" data-testid="cpu-table">
        <thead>
          <tr>
            <th className="num">CPU</th>
            <th className="num">Processed</th>
            <th className="num" title="Input backlog full (netdev_max_backlog)">
              Dropped
            </th>
            <th className="num" title="NET_RX ran out of budget with work left">
              Time squeeze
            </th>
            <th className="num">NET_RX softirqs</th>
            <th className="num" title="Longest NET_RX run since the previous sample (probe)">
              Longest run
            </th>
          </tr>
        </thead>
        <tbody>
          {cpus.map((c) => (
            <tr key={c.cpu} data-testid="cpu-row">
              <td className="num">{c.cpu}</td>
              <td className="num">{perS(c.processed)}</td>
              <td className={`num ${(c.dropped ?? 0) > 0 ? styles.hot : ""}`}>{perS(c.dropped)}</td>
              <td className={`num ${(c.timeSqueeze ?? 0) > 0 ? styles.hot : ""}`}>{perS(c.timeSqueeze)}</td>
              <td className="num">{perS(c.netRx)}</td>
              <td className="num">{formatUs(c.intervalMaxUs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

export function PathTable({ paths }: { paths: PmtuPathResult[] }) {
  if (paths.length === 0) return <p className="body muted">No path MTU checks configured or reported.</p>;
  return (
    <TableScroll label="Path MTU">
      <table className="data" data-testid="paths-table">
        <thead>
          <tr>
            <th>Target</th>
            <th>Method</th>
            <th className="num">Local MTU</th>
            <th className="num">Path MTU</th>
            <th className="num">Hops</th>
            <th>Result</th>
            <th>Measured</th>
          </tr>
        </thead>
        <tbody>
          {paths.map((p) => (
            <tr key={p.target} data-testid="path-row" data-blackhole={p.blackhole}>
              <td className="mono" title={p.evidence}>
                {p.target}
              </td>
              <td>{p.method}</td>
              <td className="num">{p.localMtu ?? "—"}</td>
              <td className="num">{p.pmtu ?? "—"}</td>
              <td className="num">{p.hops ?? "—"}</td>
              <td>
                {p.blackhole ? (
                  <span className={`${styles.flag} ${styles.overflowing}`}>BLACKHOLE</span>
                ) : p.reached ? (
                  <span className={styles.on}>reached</span>
                ) : (
                  <span className={styles.off}>not reached</span>
                )}
              </td>
              <td>
                <UtcTime iso={p.measuredAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

export function ProbeTable({ probes }: { probes: ProbeAvailability[] }) {
  if (probes.length === 0) return <p className="body muted">The agent reported no probes (all off).</p>;
  return (
    <TableScroll label="Probes">
      <table className="data" data-testid="probes-table">
        <thead>
          <tr>
            <th>Probe</th>
            <th>State</th>
            <th>Since / why off</th>
          </tr>
        </thead>
        <tbody>
          {probes.map((p) => (
            <tr key={p.probe} data-testid="probe-row" data-state={p.state}>
              <td className="mono">{p.probe}</td>
              <td className={p.state === "on" ? styles.on : styles.off}>{p.state}</td>
              <td style={{ whiteSpace: "normal" }}>
                {p.state === "on" ? (
                  <UtcTime iso={p.startedAt} />
                ) : (
                  <>
                    <span className="mono">{p.reason}</span> <span className="muted">{p.detail}</span>
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

/** bcc tools (optional extras next to tide-probes): running, or off and why. */
export function BccTable({ tools }: { tools: BccTool[] }) {
  if (tools.length === 0) return null;
  return (
    <TableScroll label="bcc tools">
      <table className="data" data-testid="bcc-table">
        <thead>
          <tr>
            <th>bcc tool</th>
            <th>State</th>
            <th>Binary / why off</th>
          </tr>
        </thead>
        <tbody>
          {tools.map((t) => (
            <tr key={t.tool} data-testid="bcc-row" data-tool={t.tool} data-state={t.state}>
              <td className="mono">{t.tool}</td>
              <td className={t.state === "on" ? styles.on : styles.off}>{t.state}</td>
              <td style={{ whiteSpace: "normal" }}>
                {t.reason && <span className="mono">{t.reason}</span>}{" "}
                <span className="muted">{t.detail}</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
