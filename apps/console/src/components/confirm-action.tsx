"use client";

import { useState, type ReactNode } from "react";
import styles from "./form-parts.module.css";

/**
 * A destructive action in two steps: the first click asks `question`, the second does it.
 * `testId` names the first button; the confirming one is `confirm-${testId}`.
 */
export function ConfirmAction({
  label,
  question,
  confirmLabel = label,
  onConfirm,
  pending = false,
  disabled = false,
  title,
  testId,
}: {
  label: string;
  question: ReactNode;
  confirmLabel?: string;
  onConfirm: () => void;
  pending?: boolean;
  disabled?: boolean;
  title?: string;
  testId: string;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button
        type="button"
        className="small danger"
        onClick={() => setAsking(true)}
        disabled={disabled || pending}
        title={title}
        data-testid={testId}
      >
        {label}
      </button>
    );
  }
  return (
    <span className={styles.confirm} role="group" aria-label={label}>
      <span>{question}</span>
      <button
        type="button"
        className="small danger"
        onClick={() => {
          onConfirm();
          setAsking(false);
        }}
        disabled={pending}
        data-testid={`confirm-${testId}`}
        autoFocus
      >
        {confirmLabel}
      </button>
      <button type="button" className="small" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
