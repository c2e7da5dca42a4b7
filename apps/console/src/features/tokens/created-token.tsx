"use client";

import { useState } from "react";
import styles from "./tokens.module.css";

/** The new token's secret, shown this once: copy it now, it cannot be shown again. */
export function CreatedToken({
  name,
  token,
  onDismiss,
}: {
  name: string;
  token: string;
  onDismiss: () => void;
}) {
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);
  async function copy() {
    try {
      await navigator.clipboard.writeText(token);
      setCopied("yes");
    } catch {
      setCopied("failed");
    }
  }
  return (
    <div className={styles.created} role="alert" data-testid="created-token">
      <strong>
        Token “{name}” created. Copy it now: it is shown only once and cannot be recovered. Store it in your
        secret manager.
      </strong>
      <div className={styles.secret}>
        <code data-testid="created-token-value">{token}</code>
        <button type="button" onClick={() => void copy()} data-testid="copy-token">
          {copied === "yes" ? "Copied" : "Copy"}
        </button>
        <button type="button" onClick={onDismiss} data-testid="dismiss-token">
          I have stored it
        </button>
      </div>
      {copied === "failed" && (
        <span>Copy failed (clipboard blocked): select the token and copy it by hand.</span>
      )}
      <span className="muted">
        Use it as <code>Authorization: Bearer {token.slice(0, 10)}…</code>
      </span>
    </div>
  );
}
