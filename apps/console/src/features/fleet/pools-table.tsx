import type { Director, PoolSummary } from "@tide/contracts";
import Link from "next/link";
import { HashPrefix } from "~/components/hash-prefix";
import { TimeAgo } from "~/components/time-ago";
import { formatBind } from "~/features/pools/format-bind";
import styles from "./fleet.module.css";
import { ProxyCounts } from "./proxy-counts";

export function PoolsTable({ pools, directors }: { pools: PoolSummary[]; directors: Director[] }) {
  const directorName = new Map(directors.map((d) => [d.id, d.hostname]));
  return (
    <table className="data" data-testid="pools-table">
      <thead>
        <tr>
          <th>Pool</th>
          <th>Binds</th>
          <th>Proxies</th>
          <th className="num">Unhealthy</th>
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
            <td>{p.directorIds.map((id) => directorName.get(id) ?? id).join(", ") || "—"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
