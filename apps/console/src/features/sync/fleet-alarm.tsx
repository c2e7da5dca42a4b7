"use client";

import Link from "next/link";
import { TimeAgo } from "~/components/time-ago";
import styles from "./sync.module.css";
import { useFleetSync } from "./use-sync";

/** Re-read every 5 s on every page: an alarm, not a live view. */
const ALARM_REFRESH_MS = 5_000;

/**
 * The fleet-level alarm under the header of every page: directors that do not serve their pools'
 * current tables, or whose agents went silent. Nothing when all is well.
 */
export function FleetAlarm() {
  const sync = useFleetSync(ALARM_REFRESH_MS);
  const bad = (sync.data?.directors ?? []).filter((d) => d.state === "out_of_sync" || d.state === "silent");
  if (bad.length === 0) return null;
  return (
    <div className={styles.alarm} role="alert" data-testid="fleet-alarm">
      <strong>
        {bad.length} director{bad.length === 1 ? "" : "s"} not serving the current tables
      </strong>
      {bad.map((d) => (
        <span key={d.directorId}>
          <Link href="/#directors-heading">{d.hostname}</Link>{" "}
          {d.state === "silent" ? "silent" : "out of sync"}
          {d.since && (
            <>
              {" "}
              since <TimeAgo iso={d.since} />
            </>
          )}
        </span>
      ))}
    </div>
  );
}
