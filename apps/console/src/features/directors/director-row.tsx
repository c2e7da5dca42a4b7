"use client";

import type { Director, PoolSummary } from "@tide/contracts";
import { useMutation } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { FormError } from "~/components/form-error";
import { useInvalidateFleet } from "~/features/pool-admin/use-invalidate-fleet";
import { useTRPC } from "~/trpc/react";
import styles from "./directors.module.css";
import { RemoveDirector, UnassignPool } from "./safety-confirm";

/**
 * One director: the pools it serves (unassign), a pool to assign, remove. Admin controls only if
 * `canAdmin`. Unassign and remove say first whether connections break (safety-confirm.tsx);
 * assigning breaks none (the director serves the same table as the pool's others).
 */
export function DirectorRow({
  director,
  pools,
  canAdmin,
}: {
  director: Director;
  pools: PoolSummary[];
  canAdmin: boolean;
}) {
  const trpc = useTRPC();
  const invalidate = useInvalidateFleet();
  const [choice, setChoice] = useState("");
  const onSuccess = () => invalidate();
  const assign = useMutation(
    trpc.directors.assignPool.mutationOptions({ onSuccess: async () => (setChoice(""), onSuccess()) }),
  );
  const unassign = useMutation(trpc.directors.unassignPool.mutationOptions({ onSuccess }));
  const remove = useMutation(trpc.directors.remove.mutationOptions({ onSuccess }));
  const poolName = new Map(pools.map((p) => [p.id, p.name]));
  const unserved = pools.filter((p) => !director.poolIds.includes(p.id));
  const error = assign.error ?? unassign.error ?? remove.error;
  const reset = () => {
    assign.reset();
    unassign.reset();
    remove.reset();
  };

  return (
    <tr data-testid="admin-director-row" data-hostname={director.hostname} data-director-id={director.id}>
      <td>
        {/* The id under the name, as on the fleet page: one column less on a phone. */}
        <div>{director.hostname}</div>
        <div className="mono muted">{director.id}</div>
      </td>
      <td>
        <div className={styles.pools}>
          {director.poolIds.map((id) => (
            <span key={id} className={styles.pool} data-testid="served-pool" data-pool-id={id}>
              <Link href={`/pools/${id}`}>{poolName.get(id) ?? id}</Link>
              {canAdmin && (
                <UnassignPool
                  directorId={director.id}
                  poolId={id}
                  pending={unassign.isPending}
                  onUnassign={(reason) => (
                    reset(),
                    unassign.mutate({ directorId: director.id, poolId: id, reason })
                  )}
                />
              )}
            </span>
          ))}
          {director.poolIds.length === 0 && <span className="muted">none</span>}
        </div>
      </td>
      {canAdmin && (
        <td className={styles.wrapCell}>
          <div className={styles.assign}>
            <select
              aria-label={`Pool to assign to ${director.hostname}`}
              value={choice}
              onChange={(e) => (reset(), setChoice(e.target.value))}
              data-testid="assign-pool-select"
            >
              <option value="">Assign a pool…</option>
              {unserved.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
            <button
              type="button"
              className="small"
              disabled={choice === "" || assign.isPending}
              onClick={() => assign.mutate({ directorId: director.id, poolId: choice })}
              title="Breaks no connection: it serves the same table as the pool's other directors"
              data-testid="assign-pool"
            >
              Assign
            </button>
            <RemoveDirector
              directorId={director.id}
              pending={remove.isPending}
              onRemove={(reason) => (reset(), remove.mutate({ directorId: director.id, reason }))}
            />
          </div>
          <FormError error={error} testId="director-error" />
        </td>
      )}
    </tr>
  );
}
