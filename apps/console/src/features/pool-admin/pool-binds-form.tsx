"use client";

import type { PoolDetail } from "@tide/contracts";
import { useMutation } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { fieldErrorsOf } from "~/components/field-errors";
import { FormError } from "~/components/form-error";
import { useTRPC } from "~/trpc/react";
import { bindInputsOf, isBindField, rowsFromBinds, type BindRow } from "./bind-rows";
import { BindsEditor } from "./binds-editor";
import styles from "./pool-admin.module.css";
import { useInvalidateFleet } from "./use-invalidate-fleet";

/** Replace a pool's binds: a new table version whose rows are the same (no flow moves). */
export function PoolBindsForm({ pool }: { pool: PoolDetail }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateFleet();
  const id = useId();
  const [rows, setRows] = useState<BindRow[]>(() => rowsFromBinds(pool.binds));
  const [reason, setReason] = useState("");
  const [localFields, setLocalFields] = useState<Record<string, string> | null>(null);
  const save = useMutation(
    trpc.pools.setBinds.mutationOptions({
      onSuccess: async (result) => {
        setRows(rowsFromBinds(result.pool.binds));
        setReason("");
        await invalidate();
      },
    }),
  );
  const fields = localFields ?? fieldErrorsOf(save.error);

  function submit(e: FormEvent) {
    e.preventDefault();
    const binds = bindInputsOf(rows);
    if (!binds.ok) {
      setLocalFields(binds.fields);
      return;
    }
    setLocalFields(null);
    save.mutate({ poolId: pool.id, binds: binds.binds, reason: reason.trim() || undefined });
  }

  const version = save.data?.tableVersion;
  return (
    <section className="panel" aria-labelledby={`${id}-h`}>
      <header>
        <h2 id={`${id}-h`}>Binds</h2>
        <span className="muted">{pool.binds.length}</span>
      </header>
      <form className={`body ${styles.form}`} onSubmit={submit} data-testid="pool-binds-form" noValidate>
        <p className={styles.note}>
          Saving writes a new table version with these binds. It moves no rows: every flow keeps its proxy.
          Directors serving this pool must not serve another pool with an overlapping bind.
        </p>
        <BindsEditor
          rows={rows}
          onChange={(r) => {
            setRows(r);
            save.reset();
          }}
          fields={fields}
        />
        <label className={styles.field}>
          Reason (audit log and table version)
          <input value={reason} onChange={(e) => setReason(e.target.value)} maxLength={500} />
        </label>
        <div className={styles.actions}>
          <button type="submit" className="primary" disabled={save.isPending} data-testid="save-binds">
            {save.isPending ? "Saving…" : "Save binds"}
          </button>
          {save.isSuccess && (
            <span className={styles.note} data-testid="binds-saved" data-version={version?.version}>
              {version
                ? `Saved as table v${version.version}; no rows moved.`
                : "Saved; no table version yet (the pool has no proxy in rotation)."}
            </span>
          )}
        </div>
        {!localFields && <FormError error={save.error} isShown={isBindField} />}
      </form>
    </section>
  );
}
