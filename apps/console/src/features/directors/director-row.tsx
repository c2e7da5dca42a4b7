"use client";

import type { Director, PoolSummary } from "@tide/contracts";
import { useMutation } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { ConfirmAction } from "~/components/confirm-action";
import { FormError } from "~/components/form-error";
import { useInvalidateFleet } from "~/features/pool-admin/use-invalidate-fleet";
import { useTRPC } from "~/trpc/react";
import styles from "./directors.module.css";

/**
 * Whether unassigning breaks connections: with another director serving the pool, the router's
 * ECMP moves this director's flows there and the same table keeps them on their proxies; as the
 * last one, the pool's traffic stops and every connection through it breaks.
 */
function unassignQuestion(director: Director, pool: PoolSummary | undefined, name: string): string {
  const others = (pool?.directorIds ?? []).filter((d) => d !== director.id).length;
  return others > 0
    ? `Stop serving ${name} from ${director.hostname}? ${others} other director${others === 1 ? "" : "s"} ` +
        `serve${others === 1 ? "s" : ""} it with the same table: its flows move there and keep their connections.`
    : `Stop serving ${name} from ${director.hostname}? No other director serves it: its traffic stops and ` +
        `every connection through it breaks.`;
}

/** One director: the pools it serves (unassign), a pool to assign, remove. Admin controls only if `canAdmin`. */
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
                <ConfirmAction
                  label="Unassign"
                  question={unassignQuestion(
                    director,
                    pools.find((p) => p.id === id),
                    poolName.get(id) ?? id,
                  )}
                  onConfirm={() => (reset(), unassign.mutate({ directorId: director.id, poolId: id }))}
                  pending={unassign.isPending}
                  testId="unassign-pool"
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
              data-testid="assign-pool"
            >
              Assign
            </button>
            <ConfirmAction
              label="Remove"
              question={`Remove ${director.hostname}? It stops serving ${director.poolIds.length} pool(s).`}
              onConfirm={() => (reset(), remove.mutate({ directorId: director.id }))}
              pending={remove.isPending}
              testId="remove-director"
            />
          </div>
          <FormError error={error} testId="director-error" />
        </td>
      )}
    </tr>
  );
}
