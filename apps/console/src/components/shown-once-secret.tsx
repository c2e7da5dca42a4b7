"use client";

import { useState, type ReactNode } from "react";
import styles from "./shown-once-secret.module.css";

/**
 * A secret the server returns once (a generated password or token): copy it now, it cannot be
 * shown again. `testId` prefixes the parts: `${testId}`, `${testId}-value`, `${testId}-copy`,
 * `${testId}-dismiss`.
 */
export function ShownOnceSecret({
  title,
  secret,
  onDismiss,
  testId,
}: {
  title: ReactNode;
  secret: string;
  onDismiss: () => void;
  testId: string;
}) {
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);
  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied("yes");
    } catch {
      setCopied("failed");
    }
  }
  return (
    <div className={styles.box} role="alert" data-testid={testId}>
      <strong>{title} It is shown only this once and cannot be recovered: copy it now.</strong>
      <div className={styles.secret}>
        <code data-testid={`${testId}-value`}>{secret}</code>
        <button type="button" onClick={() => void copy()} data-testid={`${testId}-copy`}>
          {copied === "yes" ? "Copied" : "Copy"}
        </button>
        <button type="button" onClick={onDismiss} data-testid={`${testId}-dismiss`}>
          I have stored it
        </button>
      </div>
      {copied === "failed" && <span>Copy failed (clipboard blocked): select it and copy it by hand.</span>}
    </div>
  );
}
