"use client";

import type { DirectorPoolSync } from "@tide/contracts";
import type { ReactNode } from "react";
import { HashPrefix } from "~/components/hash-prefix";
import { TimeAgo } from "~/components/time-ago";
import { SyncState } from "./sync-state";

/** Whole seconds, as the rest of the console writes ages ("4s"). */
const seconds = (ms: number) => `${Math.max(0, Math.floor(ms / 1000))}s`;

function Table({ table }: { table: NonNullable<DirectorPoolSync["served"]> }) {
  return table.version !== null ? <>v{table.version}</> : <HashPrefix hash={table.contentHash} />;
}

/**
 * One pool on one director, in words that claim no more than the director's last report:
 * "in sync: served v8 since 2m ago", "propagating: expected within 12s", "behind: serves v7
 * (reported 1s ago) since 20s ago", "unknown (no report for 4s)". Ages are the console's (checkedAt),
 * not the browser's clock.
 */
export function DirectorPoolStatus({
  pool: p,
  checkedAt,
}: {
  pool: Pick<DirectorPoolSync, "state" | "desired" | "served" | "since" | "expectedBy" | "reportAgeMs">;
  checkedAt: string;
}) {
  const reported = p.reportAgeMs !== null && <> (reported {seconds(p.reportAgeMs)} ago)</>;
  let detail: ReactNode = null;
  switch (p.state) {
    case "in_sync":
      detail = (
        <>
          : served {p.desired && <Table table={p.desired} />}
          {p.since && (
            <>
              {" "}
              since <TimeAgo iso={p.since} />
            </>
          )}
        </>
      );
      break;
    case "propagating": {
      const left = p.expectedBy ? Date.parse(p.expectedBy) - Date.parse(checkedAt) : null;
      detail =
        left === null ? null : left > 0 ? (
          <>: expected within {seconds(left)}</>
        ) : (
          <>: due {seconds(-left)} ago, waiting for its next report</>
        );
      break;
    }
    case "behind":
    case "not_served":
      detail = (
        <>
          : serves {p.served ? <Table table={p.served} /> : "nothing"}
          {reported}
          {p.since && (
            <>
              , since <TimeAgo iso={p.since} />
            </>
          )}
        </>
      );
      break;
    case "unknown":
      detail =
        p.reportAgeMs === null ? <> (no report yet)</> : <> (no report for {seconds(p.reportAgeMs)})</>;
      break;
    case "no_table":
      break;
  }
  return (
    <span data-testid="director-pool-status" data-state={p.state}>
      <SyncState state={p.state} />
      <span className="muted">{detail}</span>
    </span>
  );
}
