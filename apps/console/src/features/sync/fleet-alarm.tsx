"use client";

import { DIRECTOR_ALARM_STATES } from "@tide/contracts";
import Link from "next/link";
import { TimeAgo } from "~/components/time-ago";
import styles from "./sync.module.css";
import { useFleetSync } from "./use-sync";

/** Re-read every 5 s on every page: an alarm, not a live view. */
const ALARM_REFRESH_MS = 5_000;

/**
 * The fleet-level alarm under the header of every page: directors still not serving a pool's table
 * after the change's expected propagation time (out of sync), or whose agents went silent. A change
 * on its way, or reports that are late while the agent is in contact, are shown where they apply (the
 * pool page, the fleet page) and never here: an alarm that rings on every routine change is ignored.
 * Nothing when all is well.
 */
export function FleetAlarm() {
  const sync = useFleetSync(ALARM_REFRESH_MS);
  const bad = (sync.data?.directors ?? []).filter((d) => DIRECTOR_ALARM_STATES.includes(d.state));
  if (bad.length === 0) return null;
  return (
    <div className={styles.alarm} role="alert" data-testid="fleet-alarm">
      <strong>
        {bad.length} director{bad.length === 1 ? "" : "s"} out of sync or silent
      </strong>
      {bad.map((d) => (
        <span key={d.directorId} data-testid="alarm-director" data-hostname={d.hostname} data-state={d.state}>
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
