"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useAdminReason } from "~/components/admin-only";
import { ErrorNotice } from "~/components/error-notice";
import { useTRPC } from "~/trpc/react";
import { DeletePool } from "./delete-pool";
import { HashFieldsChange } from "./hash-fields-change";
import { PoolBindsForm } from "./pool-binds-form";
import { PoolGeneralForm } from "./pool-general-form";
import { PoolProxiesAdmin } from "./pool-proxies-admin";
import styles from "./pool-admin.module.css";

/** A pool's settings (admin): name, binds, hash fields, proxies, deletion. */
export function PoolSettingsView({ poolId }: { poolId: string }) {
  const trpc = useTRPC();
  const reason = useAdminReason();
  const pool = useQuery(trpc.pools.get.queryOptions({ poolId }));
  if (pool.error) return <ErrorNotice error={pool.error} />;
  if (!pool.data) return <p className="muted">Loading pool…</p>;
  const p = pool.data;
  return (
    <div className={styles.page}>
      <div className={styles.title}>
        <h1 data-testid="settings-pool-name">{p.name} settings</h1>
        <Link href={`/pools/${p.id}`}>Back to the pool</Link>
      </div>
      {reason ? (
        <div className="panel body" data-testid="pool-settings-forbidden">
          Changing a pool: {reason}
        </div>
      ) : (
        <>
          <PoolGeneralForm pool={p} />
          <PoolBindsForm pool={p} />
          <HashFieldsChange pool={p} />
          <PoolProxiesAdmin pool={p} />
          <DeletePool pool={p} />
        </>
      )}
    </div>
  );
}
