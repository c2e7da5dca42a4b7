"use client";

import { useState, type FormEvent } from "react";
import styles from "./sign-in-form.module.css";
import { safeNextPath } from "./sign-in-input";

export function SignInForm({ next, failed }: { next: string | undefined; failed: boolean }) {
  const [error, setError] = useState<string | null>(failed ? "Email or password is incorrect." : null);
  const [pending, setPending] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setPending(true);
    setError(null);
    try {
      const res = await fetch("/api/auth/sign-in", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: form.get("email"), password: form.get("password") }),
      });
      if (res.ok) {
        // A full navigation: the server layout reads the new cookie.
        window.location.assign(safeNextPath(next));
        return;
      }
      const body = (await res.json().catch(() => null)) as { message?: string } | null;
      setError(body?.message ?? `Sign-in failed (HTTP ${res.status}).`);
    } catch {
      setError("The console did not answer. Check your connection and try again.");
    }
    setPending(false);
  }

  return (
    // method/action: without JavaScript the browser posts the form and follows redirects.
    <form
      className={styles.form}
      onSubmit={(e) => void onSubmit(e)}
      method="post"
      action="/api/auth/sign-in"
      aria-label="Sign in"
    >
      <input type="hidden" name="next" value={safeNextPath(next)} />
      <h1>Sign in to Tide</h1>
      <label className={styles.field}>
        Email
        <input
          name="email"
          type="email"
          autoComplete="username"
          required
          autoFocus
          data-testid="sign-in-email"
        />
      </label>
      <label className={styles.field}>
        Password
        <input
          name="password"
          type="password"
          autoComplete="current-password"
          required
          data-testid="sign-in-password"
        />
      </label>
      {error && (
        <p role="alert" className={styles.error} data-testid="sign-in-error">
          {error}
        </p>
      )}
      <button type="submit" className="primary" disabled={pending} data-testid="sign-in-submit">
        {pending ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
