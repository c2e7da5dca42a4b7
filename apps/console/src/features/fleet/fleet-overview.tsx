"use client";

import { useQuery } from "@tanstack/react-query";
import { ErrorNotice } from "~/components/error-notice";
import { NewPoolButton } from "~/features/pool-admin/new-pool-button";
import { useTRPC } from "~/trpc/react";
import { DirectorSyncTable } from "~/features/sync/director-sync-table";
import styles from "./fleet.module.css";
import { PoolsTable } from "./pools-table";
import { useFleetLive } from "./use-fleet-live";

/**
 * Pools and directors at a glance; pools refreshed every 10 s, their live totals and findings every
 * 5 s, director sync every second.
 */
export function FleetOverview() {
  const trpc = useTRPC();
  const fleet = useQuery({ ...trpc.fleet.overview.queryOptions(), refetchInterval: 10_000 });
  const live = useFleetLive();
  if (fleet.error) return <ErrorNotice error={fleet.error} />;
  if (!fleet.data) return <p className="muted">Loading fleet…</p>;
  const { pools, directors } = fleet.data;
  return (
    <div className={styles.page}>
      <section className="panel" aria-labelledby="pools-heading">
        <header>
          <h2 id="pools-heading">Pools</h2>
          <span className="muted">{pools.length}</span>
          <NewPoolButton />
        </header>
        <PoolsTable pools={pools} directors={directors} live={live.data} />
      </section>
      <section className="panel" aria-labelledby="directors-heading">
        <header>
          <h2 id="directors-heading">Directors</h2>
          <span className="muted">{directors.length}</span>
        </header>
        <DirectorSyncTable />
      </section>
    </div>
  );
}
