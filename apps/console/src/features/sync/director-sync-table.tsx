"use client";

import Link from "next/link";
import { ErrorNotice } from "~/components/error-notice";
import { HashPrefix } from "~/components/hash-prefix";
import { TimeAgo } from "~/components/time-ago";
import { DirectorPoolStatus } from "./director-pool-status";
import { SyncState } from "./sync-state";
import styles from "./sync.module.css";
import { useFleetSync } from "./use-sync";
import { TableScroll } from "~/components/table-scroll";

/**
 * Every director with what it should serve and what its last report says it serves, per pool:
 * desired and served version, in sync since when, propagating, behind (only past the change's
 * expected time) or unknown (late reports), its agent's last check-in and last report, and whether
 * it reached the director's control socket. Live (re-read every second).
 */
export function DirectorSyncTable() {
  const sync = useFleetSync();
  if (sync.error) return <ErrorNotice error={sync.error} />;
  if (!sync.data) return <p className="muted body">Loading directors…</p>;
  const { directors, checkedAt } = sync.data;
  if (directors.length === 0)
    return (
      <p className="muted body">
        No directors yet. <Link href="/directors">Register one</Link> by the host name its tide-agent reports.
      </p>
    );
  return (
    <TableScroll label="Directors">
      <table className="data" data-testid="directors-table">
        <thead>
          <tr>
            <th>Director</th>
            <th>Sync</th>
            <th>Pools: desired / served</th>
            <th>Last check-in</th>
          </tr>
        </thead>
        <tbody>
          {directors.map((d) => (
            <tr key={d.directorId} data-testid="director-row" data-hostname={d.hostname} data-state={d.state}>
              <td>
                <div>{d.hostname}</div>
                <div className="mono muted">{d.directorId}</div>
              </td>
              <td>
                <SyncState state={d.state} />
                {d.since && (
                  <div className="muted">
                    since <TimeAgo iso={d.since} />
                  </div>
                )}
                {d.reachable === false && (
                  <div className="muted" title={d.error ?? undefined}>
                    director unreachable{d.error ? `: ${d.error}` : ""}
                  </div>
                )}
              </td>
              <td>
                <div className={styles.pools}>
                  {d.pools.length === 0 && <span className="muted">—</span>}
                  {d.pools.map((p) => (
                    <span
                      key={p.poolId}
                      data-testid="director-pool"
                      data-pool={p.poolName}
                      data-state={p.state}
                    >
                      <Link href={`/pools/${p.poolId}`}>{p.poolName}</Link>{" "}
                      {p.desired ? `v${p.desired.version}` : "no version"}
                      {" / "}
                      {p.served ? (
                        p.served.version !== null ? (
                          `v${p.served.version}`
                        ) : (
                          <HashPrefix hash={p.served.contentHash} />
                        )
                      ) : (
                        "none"
                      )}{" "}
                      <DirectorPoolStatus pool={p} checkedAt={checkedAt} />
                    </span>
                  ))}
                  {d.extraPools.length > 0 && (
                    <span className="muted">also serves {d.extraPools.join(", ")} (not assigned)</span>
                  )}
                </div>
              </td>
              <td>
                {d.lastCheckIn ? <TimeAgo iso={d.lastCheckIn} /> : <span className="muted">never</span>}
                {d.lastReportAt && d.lastReportAt !== d.lastCheckIn && (
                  <div className="muted">
                    last report <TimeAgo iso={d.lastReportAt} />
                  </div>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
