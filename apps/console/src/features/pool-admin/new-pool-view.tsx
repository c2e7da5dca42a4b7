"use client";

import type { HashField } from "@tide/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useId, useState, type FormEvent } from "react";
import { useAdminReason } from "~/components/admin-only";
import { FieldError } from "~/components/field-error";
import { fieldErrorsOf } from "~/components/field-errors";
import { FormError } from "~/components/form-error";
import { useTRPC } from "~/trpc/react";
import { bindInputsOf, isBindField, newBindRow, type BindRow } from "./bind-rows";
import { BindsEditor } from "./binds-editor";
import { HashFieldsPicker } from "./hash-fields-picker";
import styles from "./pool-admin.module.css";

const shownFields = (path: string) =>
  path === "name" || path === "description" || path === "hashFields" || isBindField(path);

/** Create a pool: name, description, hash fields and binds. It starts without proxies. */
export function NewPoolView() {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const reason = useAdminReason();
  const id = useId();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [hashFields, setHashFields] = useState<HashField[]>(["src_addr"]);
  const [rows, setRows] = useState<BindRow[]>(() => [newBindRow()]);
  const [localFields, setLocalFields] = useState<Record<string, string> | null>(null);
  const create = useMutation(
    trpc.pools.create.mutationOptions({
      onSuccess: async (pool) => {
        await queryClient.invalidateQueries(trpc.fleet.pathFilter());
        await queryClient.invalidateQueries(trpc.pools.pathFilter());
        router.push(`/pools/${pool.id}`);
      },
    }),
  );

  if (reason) {
    return (
      <div className={`panel body`} data-testid="new-pool-forbidden">
        Creating pools: {reason} <Link href="/">Back to the fleet</Link>
      </div>
    );
  }

  const fields = localFields ?? fieldErrorsOf(create.error);

  function submit(e: FormEvent) {
    e.preventDefault();
    const binds = bindInputsOf(rows);
    if (!binds.ok) {
      setLocalFields(binds.fields);
      return;
    }
    setLocalFields(null);
    create.mutate({
      name: name.trim(),
      description: description.trim() || undefined,
      hashFields,
      binds: binds.binds,
    });
  }

  return (
    <div className={styles.page}>
      <div className={styles.title}>
        <h1>New pool</h1>
        <span className="muted">
          It starts with no proxies; add them on the pool page, then assign a director.
        </span>
      </div>
      <section className="panel">
        <form className={`body ${styles.form}`} onSubmit={submit} data-testid="new-pool-form" noValidate>
          <label className={styles.field}>
            Name
            <input
              value={name}
              onChange={(e) => setName(e.target.value)}
              required
              maxLength={63}
              placeholder="e.g. www-eu"
              aria-invalid={fields.name ? true : undefined}
              aria-describedby={fields.name ? `${id}-name` : undefined}
              data-testid="pool-name-input"
            />
            <span className={styles.note}>Lower-case letters, digits and dashes.</span>
            <FieldError id={`${id}-name`} message={fields.name} testId="pool-name-error" />
          </label>
          <label className={styles.field}>
            Description
            <input
              value={description}
              onChange={(e) => setDescription(e.target.value)}
              maxLength={500}
              placeholder="What the pool serves"
              aria-invalid={fields.description ? true : undefined}
              aria-describedby={fields.description ? `${id}-description` : undefined}
              data-testid="pool-description-input"
            />
            <FieldError id={`${id}-description`} message={fields.description} />
          </label>
          <HashFieldsPicker value={hashFields} onChange={setHashFields} error={fields.hashFields} />
          <BindsEditor rows={rows} onChange={setRows} fields={fields} />
          <div className={styles.actions}>
            <button
              type="submit"
              className="primary"
              disabled={create.isPending || hashFields.length === 0 || name.trim() === ""}
              data-testid="create-pool-submit"
            >
              {create.isPending ? "Creating…" : "Create pool"}
            </button>
            <Link href="/">Cancel</Link>
          </div>
          {!localFields && <FormError error={create.error} isShown={shownFields} />}
        </form>
      </section>
    </div>
  );
}
