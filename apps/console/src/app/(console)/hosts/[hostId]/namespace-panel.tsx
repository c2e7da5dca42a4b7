import type { LiveNamespace } from "@tide/api";
import styles from "../hosts.module.css";
import { CounterChart } from "./counter-chart";
import { TableScroll } from "~/components/table-scroll";

export function nsTitle(ns: Pick<LiveNamespace, "netns">): string {
  if (ns.netns.root) return "root namespace";
  return ns.netns.name ? `namespace ${ns.netns.name}` : `namespace inode ${ns.netns.inode}`;
}

/** Counts as the findings' evidence writes them ("4,096"), so the two read alike. */
const count = (n: number) => n.toLocaleString("en-US");

/** One network namespace: counter rate charts and its LISTEN sockets with LIMITED / OVERFLOWING flags. */
export function NamespacePanel({ ns, counters }: { ns: LiveNamespace; counters: readonly string[] }) {
  const listeners = [...ns.listeners].sort(
    (a, b) => Number(b.overflowing) - Number(a.overflowing) || a.port - b.port,
  );
  const headingId = `ns-${ns.key.replace(/[^A-Za-z0-9_-]/g, "-")}`;
  return (
    <section className="panel" aria-labelledby={headingId} data-testid="namespace" data-ns={ns.key}>
      <header>
        <h2 id={headingId}>{nsTitle(ns)}</h2>
        <span className="muted mono">inode {ns.netns.inode}</span>
        <span className="muted">somaxconn {ns.somaxconn ?? "unknown"}</span>
      </header>
      <div className={`body ${styles.nsBody}`}>
        <div className={styles.charts}>
          {counters.map((c) => (
            <CounterChart key={c} counter={c} points={ns.points} />
          ))}
        </div>
        {listeners.length === 0 ? (
          <p className="muted">No LISTEN sockets reported.</p>
        ) : (
          <TableScroll label={`Listening sockets in ${nsTitle(ns)}`}>
            <table className="data" data-testid="listeners-table">
              <caption className="sr-only">Listening sockets in {nsTitle(ns)}</caption>
              <thead>
                <tr>
                  <th>Address</th>
                  <th className="num">Port</th>
                  <th className="num" title="Connections waiting in the accept queue now">
                    Recv-Q
                  </th>
                  <th className="num" title="Effective backlog (sk_max_ack_backlog)">
                    Send-Q
                  </th>
                  <th className="num" title="Backlog passed to listen(), if the listen probe saw it">
                    listen() backlog
                  </th>
                  <th
                    className="num"
                    title="Accept queue overflow drops on this port (listen_overflow probe)"
                  >
                    Overflow
                  </th>
                  <th>Flags</th>
                </tr>
              </thead>
              <tbody>
                {listeners.map((l) => (
                  <tr
                    key={`${l.address}:${l.port}`}
                    data-testid="listener-row"
                    data-port={l.port}
                    data-limited={l.limited}
                    data-overflowing={l.overflowing}
                  >
                    <td className="mono">{l.address}</td>
                    <td className="num">{l.port}</td>
                    <td className={`num ${l.recvQ >= l.sendQ ? styles.hot : ""}`}>{count(l.recvQ)}</td>
                    <td className="num" data-testid="listener-send-q">
                      {count(l.sendQ)}
                    </td>
                    <td className="num" data-testid="listener-backlog">
                      {l.requestedBacklog === null ? "—" : count(l.requestedBacklog)}
                    </td>
                    <td className="num">
                      {l.overflowRate === null ? "—" : `${l.overflowRate.toFixed(1)}/s`}
                    </td>
                    <td>
                      {l.overflowing && (
                        <span
                          className={`${styles.flag} ${styles.overflowing}`}
                          title="Recv-Q >= Send-Q or overflow drops: completed connections are being dropped"
                          data-testid="flag-overflowing"
                        >
                          OVERFLOWING
                        </span>
                      )}
                      {l.limited && (
                        <span
                          className={`${styles.flag} ${styles.limited}`}
                          title={`listen(${l.requestedBacklog}) was capped to ${l.sendQ} (somaxconn of this namespace)`}
                          data-testid="flag-limited"
                        >
                          LIMITED
                        </span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </div>
    </section>
  );
}
