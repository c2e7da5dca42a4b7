"use client";

import { useMutation } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { FieldError } from "~/components/field-error";
import { fieldErrorsOf } from "~/components/field-errors";
import { FormError } from "~/components/form-error";
import { useInvalidateFleet } from "~/features/pool-admin/use-invalidate-fleet";
import { useTRPC } from "~/trpc/react";
import styles from "./directors.module.css";

/** Register a director by the host name its tide-agent reports (its host token's host). */
export function RegisterDirectorForm() {
  const trpc = useTRPC();
  const invalidate = useInvalidateFleet();
  const id = useId();
  const [hostname, setHostname] = useState("");
  const register = useMutation(
    trpc.directors.register.mutationOptions({
      onSuccess: async () => {
        setHostname("");
        await invalidate();
      },
    }),
  );
  const fields = fieldErrorsOf(register.error);

  function submit(e: FormEvent) {
    e.preventDefault();
    register.mutate({ hostname: hostname.trim() });
  }

  return (
    <section className="panel" aria-labelledby={`${id}-h`}>
      <header>
        <h2 id={`${id}-h`}>Register a director</h2>
      </header>
      <div className="body">
        <p className={styles.note}>
          Use the host name its tide-agent reports (the host of its host token). It serves nothing until you
          assign pools.
        </p>
        <form className={styles.form} onSubmit={submit} data-testid="register-director-form" noValidate>
          <label className={styles.field}>
            Host name
            <input
              value={hostname}
              onChange={(e) => setHostname(e.target.value)}
              required
              placeholder="director-1.example.net"
              aria-invalid={fields.hostname ? true : undefined}
              aria-describedby={fields.hostname ? `${id}-hostname` : undefined}
              data-testid="director-hostname-input"
            />
            <FieldError id={`${id}-hostname`} message={fields.hostname} testId="director-hostname-error" />
          </label>
          <button
            type="submit"
            className={`primary ${styles.submit}`}
            disabled={register.isPending || hostname.trim() === ""}
            data-testid="register-director-submit"
          >
            {register.isPending ? "Registering…" : "Register"}
          </button>
        </form>
        <FormError error={register.error} isShown={(f) => f === "hostname"} />
        {register.data && (
          <p className={styles.done} data-testid="director-registered">
            Registered {register.data.hostname} as {register.data.id}.
          </p>
        )}
      </div>
    </section>
  );
}
