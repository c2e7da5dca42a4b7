import type { Director, FleetLive, PoolSummary } from "@tide/contracts";
import Link from "next/link";
import { HashPrefix } from "~/components/hash-prefix";
import { shortHostNames } from "~/components/short-host";
import { TimeAgo } from "~/components/time-ago";
import { formatBind } from "~/features/pools/format-bind";
import styles from "./fleet.module.css";
import { ProxyCounts } from "./proxy-counts";
import { TableScroll } from "~/components/table-scroll";

export function PoolsTable({
  pools,
  directors,
  live,
}: {
  pools: PoolSummary[];
  directors: Director[];
  /** Live totals per pool (absent while loading). */
  live?: FleetLive | undefined;
}) {
  const directorName = new Map(directors.map((d) => [d.id, d.hostname]));
  // Directors by the shortest part of their names that tells them apart (full name on hover).
  const shortName = shortHostNames(directors.map((d) => d.hostname));
  const liveOf = new Map((live?.pools ?? []).map((l) => [l.poolId, l]));
  return (
    <TableScroll label="Pools">
      <table className="data" data-testid="pools-table">
        <thead>
          <tr>
            <th>Pool</th>
            <th>Binds</th>
            <th>Proxies</th>
            <th className="num">Unhealthy</th>
            <th className="num" title="New connections per second over the pool's proxies">
              New/s
            </th>
            <th className="num" title="ESTABLISHED connections to the pool's VIPs">
              Established
            </th>
            <th title="Open findings of the pool's proxies' hosts">Findings</th>
            <th>Table</th>
            <th>Directors</th>
          </tr>
        </thead>
        <tbody>
          {pools.map((p) => (
            <tr key={p.id} data-testid="pool-row" data-pool-id={p.id}>
              <td>
                <Link href={`/pools/${p.id}`} title={p.description}>
                  {p.name}
                </Link>
              </td>
              <td className="mono">
                <span className={styles.binds}>
                  {p.binds.map((b) => (
                    <span key={b.id}>{formatBind(b)}</span>
                  ))}
                </span>
              </td>
              <td>
                <ProxyCounts counts={p.proxyCounts} />
              </td>
              <td className={`num ${p.proxyCounts.unhealthy > 0 ? styles.unhealthy : styles.zero}`}>
                {p.proxyCounts.unhealthy}
              </td>
              <LiveCells l={liveOf.get(p.id)} />
              <td>
                {p.currentVersion ? (
                  <>
                    <Link href={`/pools/${p.id}/table`}>v{p.currentVersion.version}</Link>{" "}
                    <HashPrefix hash={p.currentVersion.contentHash} />{" "}
                    <span className="muted">
                      <TimeAgo iso={p.currentVersion.createdAt} />
                    </span>
                  </>
                ) : (
                  <span className="muted">no table</span>
                )}
              </td>
              <td>
                {/* One director a line, by its short name (the full name on hover): the column
                  stays as wide as one name, however many serve the pool. */}
                <span className={styles.binds}>
                  {p.directorIds.map((id) => {
                    const name = directorName.get(id);
                    return (
                      <span key={id} title={name ?? id}>
                        {name ? (shortName.get(name) ?? name) : id}
                      </span>
                    );
                  })}
                  {p.directorIds.length === 0 && "—"}
                </span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function LiveCells({ l }: { l: FleetLive["pools"][number] | undefined }) {
  const f = l?.findings;
  return (
    <>
      <td className="num" data-testid="pool-new">
        {l?.newConnectionsPerS === null || l?.newConnectionsPerS === undefined
          ? "—"
          : l.newConnectionsPerS.toFixed(0)}
      </td>
      <td className="num" data-testid="pool-established">
        {l?.established === null || l?.established === undefined
          ? "—"
          : l.established.toLocaleString("en-US")}
      </td>
      <td data-testid="pool-findings">
        {!f || f.critical + f.warn + f.info === 0 ? (
          <span className="muted">none</span>
        ) : (
          <Link href="/findings" className={styles.findings}>
            {f.critical > 0 && <span className={styles.critical}>{f.critical} critical</span>}
            {f.warn > 0 && <span className={styles.warn}>{f.warn} warn</span>}
            {f.info > 0 && <span className="muted">{f.info} info</span>}
          </Link>
        )}
      </td>
    </>
  );
}
