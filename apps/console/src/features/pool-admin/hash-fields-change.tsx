"use client";

import type { HashField, HashFieldsPreview, PoolDetail } from "@tide/contracts";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { fieldErrorsOf } from "~/components/field-errors";
import { FormError } from "~/components/form-error";
import { useTRPC } from "~/trpc/react";
import { HashMigrationBanner } from "~/features/pools/hash-migration-banner";
import { HashFieldsPicker } from "./hash-fields-picker";
import styles from "./pool-admin.module.css";
import { useInvalidateFleet } from "./use-invalidate-fleet";

function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(fraction < 0.01 ? 2 : 1)}%`;
}

function PreviewSummary({ preview }: { preview: HashFieldsPreview }) {
  if (preview.fractionMoved === null) {
    return (
      <span data-testid="hash-preview-moved" data-moved="0">
        The pool has no table yet: no flows move.
      </span>
    );
  }
  return (
    <>
      <span className={styles.moved} data-testid="hash-preview-moved" data-moved={preview.flowsMoved}>
        {preview.flowsMoved.toLocaleString("en-US")} of {preview.sampleFlows.toLocaleString("en-US")} sample
        flows ({percent(preview.fractionMoved)}) would hash to another proxy.
      </span>
      <span data-testid="hash-preview-keeps" data-migrates={preview.migrates}>
        {preview.migrates
          ? `Established connections are kept: until the migration finishes, the table also carries ` +
            `${preview.from.join(", ")} as the alternate hash, so a flow that hashes elsewhere reaches its ` +
            `old proxy as an extra hop. New flows follow the new fields.`
          : "No director serves this pool: there is no connection to keep, and the change applies at once."}
      </span>
    </>
  );
}

/**
 * Change a pool's hash fields: pick, preview how many flows move (pools.previewHashFields), then
 * confirm. On a served pool the change migrates (the old fields stay as the alternate hash), so
 * established connections are kept; one migration at a time, finished here or on the pool page.
 */
export function HashFieldsChange({ pool }: { pool: PoolDetail }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateFleet();
  const id = useId();
  const current = pool.hashFields;
  const [proposed, setProposed] = useState<HashField[]>(current);
  const [previewOf, setPreviewOf] = useState<string | null>(null);
  const [reason, setReason] = useState("");
  const preview = useQuery({
    ...trpc.pools.previewHashFields.queryOptions({ poolId: pool.id, hashFields: previewOf ?? "" }),
    enabled: previewOf !== null,
    staleTime: Infinity,
  });
  const apply = useMutation(
    trpc.pools.setHashFields.mutationOptions({
      onSuccess: async () => {
        setPreviewOf(null);
        setReason("");
        await invalidate();
      },
    }),
  );
  const same = proposed.join(",") === current.join(",");
  const migrating = pool.hashMigration;
  const fieldError = fieldErrorsOf(apply.error).hashFields ?? fieldErrorsOf(preview.error).hashFields;

  return (
    <section className="panel" aria-labelledby={`${id}-h`} data-testid="hash-fields-change">
      <header>
        <h2 id={`${id}-h`}>Hash fields</h2>
        <span className="mono muted" data-testid="current-hash-fields">
          {current.join(", ")}
        </span>
      </header>
      <div className={`body ${styles.form}`}>
        <p className={styles.note}>
          The table&apos;s rows stay, but each flow hashes to another row, so most flows change proxy. Preview
          first; confirm writes a new table version.
        </p>
        {migrating && <HashMigrationBanner poolId={pool.id} migration={migrating} />}
        <HashFieldsPicker
          value={proposed}
          onChange={(f) => {
            setProposed(f);
            setPreviewOf(null);
            apply.reset();
          }}
          error={fieldError}
          legend="New hash fields"
        />
        <div className={styles.actions}>
          <button
            type="button"
            onClick={() => setPreviewOf(proposed.join(","))}
            disabled={same || proposed.length === 0 || previewOf !== null || migrating !== null}
            data-testid="preview-hash-fields"
          >
            Preview
          </button>
          {migrating && (
            <span className={styles.note}>Finish the migration in progress before another change.</span>
          )}
          {same && !apply.isSuccess && (
            <span className={styles.note}>Tick other fields to preview a change.</span>
          )}
          {apply.isSuccess && (
            <span className={styles.note} data-testid="hash-fields-saved">
              Now hashing on {apply.data.pool.hashFields.join(", ")}
              {apply.data.tableVersion ? `; table v${apply.data.tableVersion.version} written.` : "."}
            </span>
          )}
        </div>
        {previewOf !== null && (
          <div className={styles.preview} data-testid="hash-preview">
            {preview.isPending && <span className="muted">Sampling flows…</span>}
            {preview.error && <FormError error={preview.error} isShown={(f) => f === "hashFields"} />}
            {preview.data && (
              <>
                <span className="mono">
                  {preview.data.from.join(", ")} → {preview.data.to.join(", ")}
                </span>
                <PreviewSummary preview={preview.data} />
                {preview.data.refusal && (
                  <span className={styles.note} role="alert" data-testid="hash-preview-refusal">
                    {preview.data.refusal}
                  </span>
                )}
                <label className={styles.field}>
                  Reason (audit log and table version)
                  <input
                    value={reason}
                    onChange={(e) => setReason(e.target.value)}
                    maxLength={500}
                    data-testid="hash-fields-reason"
                  />
                </label>
                <div className={styles.actions}>
                  <button
                    type="button"
                    className="primary"
                    onClick={() =>
                      apply.mutate({
                        poolId: pool.id,
                        hashFields: proposed,
                        reason: reason.trim() || undefined,
                      })
                    }
                    disabled={apply.isPending || preview.data.refusal !== null}
                    data-testid="confirm-hash-fields"
                  >
                    {apply.isPending ? "Changing…" : "Change hash fields"}
                  </button>
                  <button type="button" onClick={() => setPreviewOf(null)}>
                    Cancel
                  </button>
                </div>
                <FormError error={apply.error} isShown={(f) => f === "hashFields"} />
              </>
            )}
          </div>
        )}
      </div>
    </section>
  );
}
