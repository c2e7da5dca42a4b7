"use client";

import { useMutation } from "@tanstack/react-query";
import { MIN_PASSWORD_LENGTH } from "@tide/contracts";
import { useId, useState, type FormEvent } from "react";
import { FieldError } from "~/components/field-error";
import { fieldErrorsOf } from "~/components/field-errors";
import { FormError } from "~/components/form-error";
import { useTRPC } from "~/trpc/react";
import styles from "./account.module.css";

const shown = (f: string) => f === "currentPassword" || f === "newPassword" || f === "confirm";

/** Change your own password: the current one, the new one twice. Other sessions are signed out. */
export function ChangePasswordForm({ email }: { email: string }) {
  const trpc = useTRPC();
  const id = useId();
  const [currentPassword, setCurrent] = useState("");
  const [newPassword, setNew] = useState("");
  const [confirm, setConfirm] = useState("");
  const change = useMutation(
    trpc.auth.changePassword.mutationOptions({
      onSuccess: () => {
        setCurrent("");
        setNew("");
        setConfirm("");
      },
    }),
  );
  const fields = fieldErrorsOf(change.error);
  const mismatch = confirm !== "" && confirm !== newPassword ? "The two new passwords differ." : undefined;

  function submit(e: FormEvent) {
    e.preventDefault();
    if (newPassword !== confirm) return;
    change.mutate({ currentPassword, newPassword });
  }

  return (
    <section className="panel" aria-labelledby={`${id}-h`}>
      <header>
        <h2 id={`${id}-h`}>Password</h2>
      </header>
      <div className="body">
        <form className={styles.form} onSubmit={submit} data-testid="change-password-form" noValidate>
          {/* For password managers: which account this password belongs to. */}
          <input type="hidden" name="username" autoComplete="username" value={email} readOnly />
          <label className={styles.field}>
            Current password
            <input
              type="password"
              value={currentPassword}
              onChange={(e) => setCurrent(e.target.value)}
              autoComplete="current-password"
              required
              aria-invalid={fields.currentPassword ? true : undefined}
              aria-describedby={fields.currentPassword ? `${id}-current` : undefined}
              data-testid="current-password-input"
            />
            <FieldError id={`${id}-current`} message={fields.currentPassword} />
          </label>
          <label className={styles.field}>
            New password
            <input
              type="password"
              value={newPassword}
              onChange={(e) => setNew(e.target.value)}
              autoComplete="new-password"
              minLength={MIN_PASSWORD_LENGTH}
              required
              aria-invalid={fields.newPassword ? true : undefined}
              aria-describedby={`${id}-new-hint${fields.newPassword ? ` ${id}-new` : ""}`}
              data-testid="new-password-input"
            />
            <p id={`${id}-new-hint`} className={styles.hint}>
              At least {MIN_PASSWORD_LENGTH} characters; not a common password, a repeated pattern or your
              email.
            </p>
            <FieldError id={`${id}-new`} message={fields.newPassword} />
          </label>
          <label className={styles.field}>
            New password again
            <input
              type="password"
              value={confirm}
              onChange={(e) => setConfirm(e.target.value)}
              autoComplete="new-password"
              required
              aria-invalid={mismatch ? true : undefined}
              aria-describedby={mismatch ? `${id}-confirm` : undefined}
              data-testid="confirm-password-input"
            />
            <FieldError id={`${id}-confirm`} message={mismatch} />
          </label>
          <button
            type="submit"
            className={`primary ${styles.submit}`}
            disabled={
              change.isPending || currentPassword === "" || newPassword === "" || newPassword !== confirm
            }
            data-testid="change-password-submit"
          >
            {change.isPending ? "Changing…" : "Change password"}
          </button>
        </form>
        <FormError error={change.error} isShown={shown} />
        {change.data && (
          <p role="status" data-testid="change-password-done">
            Password changed.{" "}
            {change.data.sessionsEnded === 1
              ? "1 other session was signed out."
              : `${change.data.sessionsEnded} other sessions were signed out.`}
          </p>
        )}
      </div>
    </section>
  );
}
