"use client";

import styles from "./console-layout.module.css";

/** A page that failed to render: say so, keep the header, offer a retry. */
export default function ConsoleError({
  error,
  reset,
}: {
  error: Error & { digest?: string };
  reset: () => void;
}) {
  return (
    <div role="alert" className={styles.failure} data-testid="page-error">
      <h1>This page failed to load</h1>
      <p>{error.message || "Unexpected error."}</p>
      {error.digest && (
        <p className="muted mono">digest {error.digest} (search the console&apos;s log for it)</p>
      )}
      <button type="button" onClick={reset}>
        Try again
      </button>
    </div>
  );
}
