"use client";

import type { BindInput, BindsPreview, PoolDetail } from "@tide/contracts";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useId, useMemo, useState, type FormEvent } from "react";
import { fieldErrorsOf } from "~/components/field-errors";
import { FormError } from "~/components/form-error";
import { useTRPC } from "~/trpc/react";
import { bindInputsOf, isBindField, rowsFromBinds, type BindRow } from "./bind-rows";
import { BindsEditor } from "./binds-editor";
import safety from "./binds-safety.module.css";
import styles from "./pool-admin.module.css";
import { useInvalidateFleet } from "./use-invalidate-fleet";

/** How long the rows must stay unchanged before the preview is asked, ms (typing is not asked). */
const PREVIEW_DEBOUNCE_MS = 400;

/** The binds as the preview takes them: "tcp/203.0.113.10:443,tcp/203.0.113.64/26:8000-8099". */
function labelsOf(binds: readonly BindInput[]): string {
  return binds
    .map((b) => {
      const end = b.portEnd ?? b.portStart;
      return `${b.proto}/${b.address}:${b.portStart}${end === b.portStart ? "" : `-${end}`}`;
    })
    .join(",");
}

/** `value`, once it has not changed for `ms`. */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return settled;
}

/**
 * What the edited binds would break, from GET …/binds/preview: a warning (role alert) when the
 * proxies report connections to what stops, a note when how many is unknown or nothing breaks.
 */
function BindsSafety({ preview }: { preview: BindsPreview }) {
  const className =
    preview.breaks === true ? safety.breaks : preview.breaks === null ? safety.unknown : safety.fine;
  return (
    <p
      className={className}
      role={preview.breaks === true ? "alert" : undefined}
      data-testid="binds-safety"
      data-breaks={String(preview.breaks)}
      data-count={preview.broken}
    >
      {preview.message}
    </p>
  );
}

/**
 * Replace a pool's binds: a new table version whose rows are the same (no flow moves). Removing or
 * narrowing a bind stops the directors forwarding it: the form previews what that breaks as the
 * rows are edited, and Save waits for a reason when the proxies report connections that break
 * (the API refuses the change without one).
 */
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

  // The preview of the rows as they are, once they settle; none while they equal the pool's binds.
  const saved = useMemo(() => {
    const b = bindInputsOf(rowsFromBinds(pool.binds));
    return b.ok ? labelsOf(b.binds) : null;
  }, [pool.binds]);
  const edited = useMemo(() => {
    const b = bindInputsOf(rows);
    return b.ok ? labelsOf(b.binds) : null;
  }, [rows]);
  const settled = useSettled(edited, PREVIEW_DEBOUNCE_MS);
  const changed = edited !== null && edited !== saved;
  const preview = useQuery({
    ...trpc.pools.previewBinds.queryOptions({ poolId: pool.id, binds: settled ?? "" }),
    enabled: changed && settled === edited,
    refetchInterval: 10_000,
    retry: false,
  });
  const shown = changed && settled === edited && !save.isSuccess ? preview.data : undefined;
  const missingReason = shown?.breaks === true && reason.trim() === "";

  function submit(e: FormEvent) {
    e.preventDefault();
    if (missingReason) return;
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
          Directors serving this pool must not serve another pool with an overlapping bind. Removing or
          narrowing a bind stops the directors forwarding it: connections to it break.
        </p>
        <BindsEditor
          rows={rows}
          onChange={(r) => {
            setRows(r);
            save.reset();
          }}
          fields={fields}
        />
        {shown && <BindsSafety preview={shown} />}
        <label className={styles.field}>
          {shown?.breaks === true
            ? "Reason (required: this change breaks connections; audit log and table version)"
            : "Reason (audit log and table version)"}
          <input
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            maxLength={500}
            required={shown?.breaks === true}
            aria-required={shown?.breaks === true}
            data-testid="binds-reason"
          />
        </label>
        <div className={styles.actions}>
          <button
            type="submit"
            className="primary"
            disabled={save.isPending || missingReason}
            title={missingReason ? "give a reason first" : undefined}
            data-testid="save-binds"
          >
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
