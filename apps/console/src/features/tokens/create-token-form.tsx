"use client";

import type { Scope } from "@tide/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { useMe } from "~/features/session/session-context";
import { useTRPC } from "~/trpc/react";
import { CreatedToken } from "./created-token";
import styles from "./tokens.module.css";

const expiries: { label: string; days: number | undefined }[] = [
  { label: "7 days", days: 7 },
  { label: "30 days", days: 30 },
  { label: "90 days", days: 90 },
  { label: "1 year", days: 365 },
  { label: "never", days: undefined },
];

/** Name, scopes (at most the user's own) and expiry; the secret is shown once on success. */
export function CreateTokenForm() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const me = useMe();
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Scope[]>(["read"]);
  const [expiry, setExpiry] = useState("90 days");
  const create = useMutation(
    trpc.tokens.create.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries(trpc.tokens.list.queryFilter()),
    }),
  );

  function toggle(scope: Scope, on: boolean) {
    setScopes((s) => (on ? [...new Set([...s, scope])] : s.filter((x) => x !== scope)));
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    const days = expiries.find((x) => x.label === expiry)?.days;
    create.mutate({ name: name.trim(), scopes, expiresInDays: days }, { onSuccess: () => setName("") });
  }

  return (
    <section className="panel" aria-labelledby="create-token-heading">
      <header>
        <h2 id="create-token-heading">New API token</h2>
      </header>
      <div className="body">
        {create.data && (
          <CreatedToken
            name={create.data.summary.name}
            token={create.data.token}
            onDismiss={() => create.reset()}
          />
        )}
        <form className={styles.form} onSubmit={submit} data-testid="create-token-form">
          <label className={styles.field}>
            Name
            <input
              value={name}
              onChange={(e) => setName(e.target.value)}
              required
              maxLength={80}
              placeholder="e.g. runbook-drain"
              data-testid="token-name"
            />
          </label>
          <fieldset className={`${styles.field} ${styles.fieldset}`}>
            <legend className="muted">Scopes</legend>
            <div className={styles.scopes}>
              {me.scopes.map((s) => (
                <label key={s}>
                  <input
                    type="checkbox"
                    checked={scopes.includes(s)}
                    onChange={(e) => toggle(s, e.target.checked)}
                    data-testid={`token-scope-${s}`}
                  />
                  {s}
                </label>
              ))}
            </div>
          </fieldset>
          <label className={styles.field}>
            Expires after
            <select value={expiry} onChange={(e) => setExpiry(e.target.value)} data-testid="token-expiry">
              {expiries.map((x) => (
                <option key={x.label}>{x.label}</option>
              ))}
            </select>
          </label>
          <button
            type="submit"
            className="primary"
            disabled={create.isPending || scopes.length === 0 || name.trim() === ""}
            data-testid="create-token-submit"
          >
            {create.isPending ? "Creating…" : "Create token"}
          </button>
        </form>
        {create.error && <ErrorNotice error={create.error} />}
      </div>
    </section>
  );
}
