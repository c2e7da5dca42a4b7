"use client";

import { useEffect, useId, useRef, type ReactNode } from "react";
import styles from "./modal-dialog.module.css";

/** The fields a dialog is usually opened to fill in; the first of them gets focus on open. */
const FIELDS = 'input:not([type="hidden"]):not(:disabled), select:not(:disabled), textarea:not(:disabled)';

/**
 * A native modal <dialog>: focus is trapped, Escape closes, the page behind is inert.
 * Rendered only while open, so its content mounts (and fetches) when it opens. On open its first
 * field has focus (a dialog without fields keeps the browser's choice, the Close button, so Enter
 * never confirms by accident); on close focus goes back to whatever opened it.
 */
export function ModalDialog({
  title,
  onClose,
  children,
  testId,
}: {
  title: ReactNode;
  onClose: () => void;
  children: ReactNode;
  testId?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const body = useRef<HTMLDivElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (dialog && !dialog.open) dialog.showModal();
    body.current?.querySelector<HTMLElement>(FIELDS)?.focus();
    return () => {
      dialog?.close();
      // The dialog is unmounted by now, so the browser's own focus return has nothing to go on.
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      className={styles.dialog}
      aria-labelledby={titleId}
      data-testid={testId}
      onClose={onClose}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <div className={styles.head}>
        <h2 id={titleId}>{title}</h2>
        <button type="button" className={styles.close} onClick={onClose} aria-label="Close">
          ×
        </button>
      </div>
      <div ref={body} className={styles.body}>
        {children}
      </div>
    </dialog>
  );
}
