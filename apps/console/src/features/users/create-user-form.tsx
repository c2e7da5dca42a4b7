"use client";

import { Role } from "@tide/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { FieldError } from "~/components/field-error";
import { fieldErrorsOf } from "~/components/field-errors";
import { FormError } from "~/components/form-error";
import { ShownOnceSecret } from "~/components/shown-once-secret";
import { useTRPC } from "~/trpc/react";
import { roleHelp } from "./role-names";
import styles from "./users.module.css";

const shown = (f: string) => f === "email" || f === "name" || f === "role";

/** Email, name and role; the generated password is shown once on success. */
export function CreateUserForm() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const id = useId();
  const [email, setEmail] = useState("");
  const [name, setName] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const create = useMutation(
    trpc.users.create.mutationOptions({
      onSuccess: async () => {
        setEmail("");
        setName("");
        await queryClient.invalidateQueries(trpc.users.list.queryFilter());
      },
    }),
  );
  const fields = fieldErrorsOf(create.error);

  function submit(e: FormEvent) {
    e.preventDefault();
    create.mutate({ email: email.trim(), name: name.trim(), role });
  }

  return (
    <section className="panel" aria-labelledby={`${id}-h`}>
      <header>
        <h2 id={`${id}-h`}>New user</h2>
      </header>
      <div className={`body ${styles.stack}`}>
        {create.data?.password && (
          <ShownOnceSecret
            title={`${create.data.user.email} created as ${create.data.user.role}. Their password:`}
            secret={create.data.password}
            onDismiss={() => create.reset()}
            testId="created-password"
          />
        )}
        <form className={styles.form} onSubmit={submit} data-testid="create-user-form" noValidate>
          <label className={styles.field}>
            Email
            <input
              type="email"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              required
              autoComplete="off"
              aria-invalid={fields.email ? true : undefined}
              aria-describedby={fields.email ? `${id}-email` : undefined}
              data-testid="user-email-input"
            />
            <FieldError id={`${id}-email`} message={fields.email} testId="user-email-error" />
          </label>
          <label className={styles.field}>
            Name
            <input
              value={name}
              onChange={(e) => setName(e.target.value)}
              required
              maxLength={80}
              autoComplete="off"
              aria-invalid={fields.name ? true : undefined}
              aria-describedby={fields.name ? `${id}-name` : undefined}
              data-testid="user-name-input"
            />
            <FieldError id={`${id}-name`} message={fields.name} testId="user-name-error" />
          </label>
          <label className={styles.field}>
            Role
            <select
              value={role}
              onChange={(e) => setRole(Role.parse(e.target.value))}
              data-testid="user-role-input"
            >
              {Role.options.map((r) => (
                <option key={r} value={r}>
                  {roleHelp[r]}
                </option>
              ))}
            </select>
            <FieldError id={`${id}-role`} message={fields.role} />
          </label>
          <button
            type="submit"
            className={`primary ${styles.submit}`}
            disabled={create.isPending || email.trim() === "" || name.trim() === ""}
            data-testid="create-user-submit"
          >
            {create.isPending ? "Creating…" : "Create user"}
          </button>
        </form>
        <FormError error={create.error} isShown={shown} />
      </div>
    </section>
  );
}
