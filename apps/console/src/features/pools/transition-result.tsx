import type { ProxyState, TableVersionSummary } from "@tide/contracts";
import Link from "next/link";
import { HashPrefix } from "~/components/hash-prefix";
import { StateBadge } from "~/components/state-badge";
import styles from "./transition-dialog.module.css";

/** After a confirmed action: the proxy's new state and the table version it produced. */
export function TransitionResult({
  poolId,
  hostname,
  state,
  version,
}: {
  poolId: string;
  hostname: string;
  state: ProxyState;
  version: TableVersionSummary | null;
}) {
  if (!version) {
    return (
      <div className={styles.result} role="status" data-testid="transition-result">
        {hostname} is now <StateBadge state={state} />. No proxy is left in rotation, so no table version was
        written; no director serves this pool.
      </div>
    );
  }
  return (
    <div
      className={styles.result}
      role="status"
      data-testid="transition-result"
      data-version={version.version}
    >
      {hostname} is now <StateBadge state={state} />. Table version{" "}
      <strong data-testid="new-version">v{version.version}</strong> <HashPrefix hash={version.contentHash} />{" "}
      is current.{" "}
      <Link href={`/pools/${poolId}/versions?to=${version.version}`} data-testid="new-version-diff-link">
        See its diff
      </Link>{" "}
      ·{" "}
      <Link href={`/pools/${poolId}/table?version=${version.version}`} data-testid="new-version-table-link">
        table
      </Link>
    </div>
  );
}
