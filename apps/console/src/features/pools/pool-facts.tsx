import type { PoolDetail } from "@tide/contracts";
import Link from "next/link";
import { HashPrefix } from "~/components/hash-prefix";
import { TimeAgo } from "~/components/time-ago";
import { formatBind } from "./format-bind";
import styles from "./pool-view.module.css";

/** Binds, hash fields, directors and the current table version of a pool, as a dense fact list. */
export function PoolFacts({ pool }: { pool: PoolDetail }) {
  const v = pool.currentVersion;
  return (
    <dl className={styles.facts}>
      <div>
        <dt>Binds</dt>
        <dd className="mono">
          {pool.binds.map((b) => (
            <div key={b.id}>{formatBind(b)}</div>
          ))}
        </dd>
      </div>
      <div>
        <dt>Hash fields</dt>
        <dd className="mono">{pool.hashFields.join(", ")}</dd>
      </div>
      <div>
        <dt>Directors</dt>
        <dd>
          {pool.directors.map((d) => (
            <div key={d.id} title={d.id}>
              {d.hostname}
            </div>
          ))}
          {pool.directors.length === 0 && <span className="muted">none</span>}
        </dd>
      </div>
      <div>
        <dt>Current table</dt>
        <dd data-testid="current-version" data-version={v?.version}>
          {v ? (
            <>
              <Link href={`/pools/${pool.id}/table`}>v{v.version}</Link> <HashPrefix hash={v.contentHash} />
              <div className="muted">
                {v.cause} · <TimeAgo iso={v.createdAt} />
              </div>
            </>
          ) : (
            <span className="muted">none yet</span>
          )}
        </dd>
      </div>
    </dl>
  );
}
