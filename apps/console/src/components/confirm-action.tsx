"use client";

import { useEffect, useRef, useState, type ReactNode } from "react";
import styles from "./form-parts.module.css";

/**
 * A destructive action in two steps: the first click asks `question`, the second does it.
 * `testId` names the first button; the confirming one is `confirm-${testId}`. The question takes
 * focus on its confirming button; Cancel or Escape puts focus back on the first button.
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
  const first = useRef<HTMLButtonElement>(null);
  const refocus = useRef(false);
  useEffect(() => {
    if (asking || !refocus.current) return;
    refocus.current = false;
    first.current?.focus();
  }, [asking]);
  const cancel = () => {
    refocus.current = true;
    setAsking(false);
  };
  if (!asking) {
    return (
      <button
        ref={first}
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
    <span
      className={styles.confirm}
      role="group"
      aria-label={label}
      onKeyDown={(e) => {
        if (e.key === "Escape") cancel();
      }}
    >
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
      <button type="button" className="small" onClick={cancel}>
        Cancel
      </button>
    </span>
  );
}
