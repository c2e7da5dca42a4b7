"use client";

import type { HashMigration, PoolTraffic } from "@tide/contracts";
import { useMutation, useQuery } from "@tanstack/react-query";
import { ConfirmAction } from "~/components/confirm-action";
import { FormError } from "~/components/form-error";
import { useInvalidateFleet } from "~/features/pool-admin/use-invalidate-fleet";
import { useHasScope } from "~/features/session/session-context";
import { useTRPC } from "~/trpc/react";
import { formatDuration } from "./duration";
import styles from "./pool-view.module.css";
import { useNow } from "./use-now";

/**
 * Packets/s reaching their proxy through the old fields, summed over the proxies that report the
 * pool's own VIP counters; null when none does (an older agent or tide-redirect, or no agent).
 */
function alternateHashTotal(traffic: PoolTraffic | undefined): number | null {
  const known = (traffic?.proxies ?? [])
    .map((p) => p.acceptedAlternateHashPerS)
    .filter((v): v is number => v !== null);
  return known.length === 0 ? null : known.reduce((a, b) => a + b, 0);
}

/**
 * A hash-field change still migrating, like a drain: what changed, for how long, what still uses
 * the old fields, and (for admins) Finish. The console finishes it by itself once the pool's
 * proxies saw no packet through the old fields for a quiet window (services/tables/hash-migration.plan.ts).
 */
export function HashMigrationBanner({ poolId, migration }: { poolId: string; migration: HashMigration }) {
  const trpc = useTRPC();
  // The pool page's own traffic query (same key: no second request), pushed after each batch.
  const traffic = useQuery({ ...trpc.pools.traffic.queryOptions({ poolId }), refetchInterval: 30_000 });
  const alternateHashPerS = alternateHashTotal(traffic.data);
  const now = useNow();
  const canAdmin = useHasScope("admin");
  const invalidate = useInvalidateFleet();
  const finish = useMutation(trpc.pools.finishHashMigration.mutationOptions({ onSuccess: invalidate }));
  const busy = alternateHashPerS !== null && alternateHashPerS > 0;
  return (
    <section
      className={styles.banner}
      role="region"
      aria-label="Hash-field migration in progress"
      data-testid="hash-migration-banner"
    >
      <span className={styles.bannerText}>
        Hash fields migrating <span className="mono">{migration.from.join(", ")}</span> →{" "}
        <span className="mono">{migration.to.join(", ")}</span>
        {now !== null && (
          <span data-testid="hash-migration-duration">
            {" "}
            for {formatDuration(now - Date.parse(migration.startedAt))}
          </span>
        )}
      </span>
      <span
        className={styles.bannerNote}
        data-testid="hash-migration-alternate"
        data-rate={alternateHashPerS ?? ""}
      >
        {alternateHashPerS === null
          ? "Established flows still reaching their old proxy: unknown (no proxy reports the counter)."
          : busy
            ? `Established flows still reaching their old proxy: ${alternateHashPerS.toFixed(1)} packets/s through the old fields.`
            : "No established flow reaches its proxy through the old fields now."}{" "}
        <span className="muted">
          New flows follow the new fields; the console finishes the migration once no packet needs the old
          ones for 30 s (after at least 60 s).
        </span>
      </span>
      {canAdmin && (
        <span className={styles.bannerActions}>
          <ConfirmAction
            label="Finish migration"
            question={
              busy
                ? `Flows still use the old fields (${alternateHashPerS!.toFixed(1)} packets/s): finishing resets them. Finish anyway?`
                : "Drop the old fields from the table?"
            }
            confirmLabel="Finish"
            onConfirm={() =>
              finish.mutate({
                poolId,
                reason: busy
                  ? `finished with ${alternateHashPerS!.toFixed(1)} packets/s on the old fields`
                  : undefined,
              })
            }
            pending={finish.isPending}
            testId="finish-hash-migration"
          />
          <FormError error={finish.error} testId="finish-hash-migration-error" />
        </span>
      )}
    </section>
  );
}
