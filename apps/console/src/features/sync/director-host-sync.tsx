"use client";

import Link from "next/link";
import { HashPrefix } from "~/components/hash-prefix";
import { TimeAgo } from "~/components/time-ago";
import { DirectorPoolStatus } from "./director-pool-status";
import { SyncState } from "./sync-state";
import { useFleetSync } from "./use-sync";

/**
 * On a director host's page: each table it serves against the version the console wants, not a bare
 * hash. A host whose name is no registered director says so (its tables are its own business).
 */
export function DirectorHostSync({
  hostname,
  tableHashes,
}: {
  hostname: string;
  tableHashes: Record<string, string>;
}) {
  const sync = useFleetSync();
  const director = sync.data?.directors.find((d) => d.hostname === hostname);
  const served = Object.entries(tableHashes);
  if (!director) {
    return (
      <p className="muted" data-testid="dataplane-tables">
        {sync.data ? "Not a registered director; tables served: " : "Tables served: "}
        {served.length === 0
          ? "none"
          : served.map(([pool, hash]) => (
              <span key={pool} className="mono" style={{ marginRight: 12 }}>
                {pool} <HashPrefix hash={hash} />
              </span>
            ))}
      </p>
    );
  }
  // Set whenever `director` is: it came from sync.data.
  const checkedAt = sync.data?.checkedAt ?? director.lastCheckIn ?? "";
  return (
    <div data-testid="dataplane-tables" data-state={director.state}>
      <p>
        Console sync: <SyncState state={director.state} />
        {director.since && (
          <span className="muted">
            {" "}
            since <TimeAgo iso={director.since} />
          </span>
        )}
      </p>
      <ul>
        {director.pools.map((p) => (
          <li key={p.poolId} data-testid="director-pool" data-pool={p.poolName} data-state={p.state}>
            <Link href={`/pools/${p.poolId}`}>{p.poolName}</Link>: wants{" "}
            {p.desired ? `v${p.desired.version}` : "nothing yet"}, last report: serves{" "}
            {p.served ? (
              p.served.version !== null ? (
                `v${p.served.version}`
              ) : (
                <HashPrefix hash={p.served.contentHash} />
              )
            ) : (
              "nothing"
            )}{" "}
            <DirectorPoolStatus pool={p} checkedAt={checkedAt} />
          </li>
        ))}
        {director.extraPools.map((name) => (
          <li key={name} className="muted">
            {name}: served, but not assigned to this director
          </li>
        ))}
      </ul>
    </div>
  );
}
