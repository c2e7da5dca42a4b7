"use client";

import type { PoolDetail } from "@tide/contracts";
import { useMutation } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { FieldError } from "~/components/field-error";
import { fieldErrorsOf } from "~/components/field-errors";
import { FormError } from "~/components/form-error";
import { useTRPC } from "~/trpc/react";
import styles from "./pool-admin.module.css";
import { useInvalidateFleet } from "./use-invalidate-fleet";

/** Rename or re-describe a pool (no table change). */
export function PoolGeneralForm({ pool }: { pool: PoolDetail }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateFleet();
  const id = useId();
  const [name, setName] = useState(pool.name);
  const [description, setDescription] = useState(pool.description);
  const update = useMutation(trpc.pools.update.mutationOptions({ onSuccess: () => invalidate() }));
  const fields = fieldErrorsOf(update.error);
  const changed = name.trim() !== pool.name || description.trim() !== pool.description;

  function submit(e: FormEvent) {
    e.preventDefault();
    update.mutate({
      poolId: pool.id,
      name: name.trim() === pool.name ? undefined : name.trim(),
      description: description.trim(),
    });
  }

  return (
    <section className="panel" aria-labelledby={`${id}-h`}>
      <header>
        <h2 id={`${id}-h`}>Name and description</h2>
        <span className="muted">no table change</span>
      </header>
      <form className={`body ${styles.form}`} onSubmit={submit} data-testid="pool-general-form" noValidate>
        <label className={styles.field}>
          Name
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            required
            maxLength={63}
            aria-invalid={fields.name ? true : undefined}
            aria-describedby={fields.name ? `${id}-name` : undefined}
            data-testid="pool-name-input"
          />
          <FieldError id={`${id}-name`} message={fields.name} testId="pool-name-error" />
        </label>
        <label className={styles.field}>
          Description
          <input
            value={description}
            onChange={(e) => setDescription(e.target.value)}
            maxLength={500}
            aria-invalid={fields.description ? true : undefined}
            aria-describedby={fields.description ? `${id}-description` : undefined}
            data-testid="pool-description-input"
          />
          <FieldError id={`${id}-description`} message={fields.description} />
        </label>
        <div className={styles.actions}>
          <button
            type="submit"
            className="primary"
            disabled={update.isPending || !changed}
            data-testid="save-pool-general"
          >
            {update.isPending ? "Saving…" : "Save"}
          </button>
          {update.isSuccess && !changed && (
            <span className={styles.note} data-testid="pool-general-saved">
              Saved.
            </span>
          )}
        </div>
        <FormError error={update.error} isShown={(f) => f === "name" || f === "description"} />
      </form>
    </section>
  );
}
