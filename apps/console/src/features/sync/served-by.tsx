"use client";

import Link from "next/link";
import { TimeAgo } from "~/components/time-ago";
import { SyncState } from "./sync-state";
import styles from "./sync.module.css";
import { usePoolSync } from "./use-sync";

/**
 * "v7 served by 2/2 directors": whether a pool's current version has reached every director that
 * serves the pool (a proxy action is done when it has), and which directors lag, since when.
 */
export function ServedBy({ poolId }: { poolId: string }) {
  const sync = usePoolSync(poolId);
  if (sync.error) return <span className="muted">Director sync unknown: {sync.error.message}</span>;
  if (!sync.data) return <span className="muted">Checking directors…</span>;
  const s = sync.data;
  if (s.directorCount === 0)
    return (
      <span className="muted" data-testid="served-by" data-served={0} data-of={0} data-done="false">
        No director serves this pool: <Link href="/directors">assign one</Link>.
      </span>
    );
  const lagging = s.directors.filter((d) => d.state !== "in_sync");
  return (
    <div
      data-testid="served-by"
      data-version={s.version ?? ""}
      data-served={s.servedBy}
      data-of={s.directorCount}
      data-done={String(s.done)}
      role="status"
    >
      <span className={styles.servedBy}>
        {s.version !== null && <strong>v{s.version}</strong>}
        <span>
          served by{" "}
          <strong>
            {s.servedBy}/{s.directorCount}
          </strong>{" "}
          director{s.directorCount === 1 ? "" : "s"}
        </span>
        <SyncState state={s.done ? "in_sync" : "behind"} />
      </span>
      {lagging.length > 0 && (
        <ul className={styles.lagging}>
          {lagging.map((d) => (
            <li key={d.directorId} data-testid="lagging-director">
              {d.hostname}: <SyncState state={d.state} />
              {d.served && (
                <span className="muted">
                  {" "}
                  serves {d.served.version !== null ? `v${d.served.version}` : "an unknown table"}
                </span>
              )}
              {d.since && (
                <span className="muted">
                  {" "}
                  since <TimeAgo iso={d.since} />
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
