"use client";

import Link from "next/link";
import { DirectorPoolStatus } from "./director-pool-status";
import { SyncState } from "./sync-state";
import styles from "./sync.module.css";
import { usePoolSync } from "./use-sync";

/** Whole seconds from the console's own clock. */
const secondsBetween = (from: string, to: string) =>
  `${Math.max(0, Math.floor((Date.parse(to) - Date.parse(from)) / 1000))}s`;

/**
 * "v7 served by 2/2 directors", or "v8 propagating (1/2)" while a change is within its expected
 * propagation time: whether a pool's current version has reached every director that serves it (a
 * proxy action is done when it has), and for each director that has not, what its last report says
 * ("unknown (no report for 4s)" when the reports are late; "behind" only from a report made after
 * the expected time).
 */
export function ServedBy({ poolId }: { poolId: string }) {
  const sync = usePoolSync(poolId);
  if (sync.error) return <span className="muted">Director sync unknown: {sync.error.message}</span>;
  if (!sync.data) return <span className="muted">Checking directors…</span>;
  const s = sync.data;
  if (s.directorCount === 0)
    return (
      <span
        className="muted"
        data-testid="served-by"
        data-state={s.state}
        data-served={0}
        data-of={0}
        data-done="false"
      >
        No director serves this pool: <Link href="/directors">assign one</Link>.
      </span>
    );
  const lagging = s.directors.filter((d) => d.state !== "in_sync");
  const count = (
    <strong>
      {s.servedBy}/{s.directorCount}
    </strong>
  );
  return (
    <div
      data-testid="served-by"
      data-state={s.state}
      data-version={s.version ?? ""}
      data-served={s.servedBy}
      data-of={s.directorCount}
      data-done={String(s.done)}
      role="status"
    >
      <span className={styles.servedBy}>
        {s.version !== null && <strong>v{s.version}</strong>}
        {s.state === "propagating" ? (
          <span data-testid="propagating">
            <span className={`${styles.state} ${styles.pending}`}>propagating</span> ({s.servedBy}/
            {s.directorCount})
            {s.expectedBy && Date.parse(s.expectedBy) > Date.parse(s.checkedAt) && (
              <span className="muted"> expected within {secondsBetween(s.checkedAt, s.expectedBy)}</span>
            )}
          </span>
        ) : (
          <>
            <span>
              served by {count} director{s.directorCount === 1 ? "" : "s"}
            </span>
            <SyncState state={s.state} />
          </>
        )}
      </span>
      {lagging.length > 0 && (
        <ul className={styles.lagging}>
          {lagging.map((d) => (
            <li
              key={d.directorId}
              data-testid="lagging-director"
              data-hostname={d.hostname}
              data-state={d.state}
            >
              {d.hostname}: <DirectorPoolStatus pool={d} checkedAt={s.checkedAt} />
              {(d.directorState === "silent" || d.directorState === "no_agent") && (
                <>
                  {" "}
                  <SyncState state={d.directorState} />
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
