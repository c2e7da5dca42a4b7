"use client";

import type { PoolDetail } from "@tide/contracts";
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useId } from "react";
import { ConfirmAction } from "~/components/confirm-action";
import { FormError } from "~/components/form-error";
import { useTRPC } from "~/trpc/react";
import styles from "./pool-admin.module.css";
import { useInvalidateFleet } from "./use-invalidate-fleet";

/** Delete a pool; the API refuses while a director serves it, and says which to unassign. */
export function DeletePool({ pool }: { pool: PoolDetail }) {
  const trpc = useTRPC();
  const router = useRouter();
  const invalidate = useInvalidateFleet();
  const id = useId();
  const remove = useMutation(
    trpc.pools.remove.mutationOptions({
      onSuccess: async () => {
        router.push("/");
        await invalidate();
      },
    }),
  );
  return (
    <section className={`panel ${styles.danger}`} aria-labelledby={`${id}-h`}>
      <header>
        <h2 id={`${id}-h`}>Delete pool</h2>
      </header>
      <div className={`body ${styles.form}`}>
        <p className={styles.note}>
          Only a pool no director serves can be deleted: unassign its directors first (that stops its
          traffic), then its proxies, in any state, go with it. Its history stays in the audit log.
        </p>
        <div className={styles.actions}>
          <ConfirmAction
            label="Delete pool"
            question={`Delete ${pool.name}, its ${pool.proxies.length} prox${pool.proxies.length === 1 ? "y" : "ies"}, binds and table versions?`}
            confirmLabel="Delete"
            onConfirm={() => remove.mutate({ poolId: pool.id })}
            pending={remove.isPending}
            testId="delete-pool"
          />
        </div>
        <FormError error={remove.error} testId="delete-pool-error" />
      </div>
    </section>
  );
}
