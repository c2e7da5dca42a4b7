"use client";

import { useState } from "react";
import styles from "./findings.module.css";

/** A remedy command with a Copy button (falls back to selecting by hand if the clipboard is blocked). */
export function CopyCommand({ command }: { command: string }) {
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);
  async function copy() {
    try {
      await navigator.clipboard.writeText(command);
      setCopied("yes");
    } catch {
      setCopied("failed");
    }
  }
  return (
    <div className={styles.command}>
      <code data-testid="remedy-command">{command}</code>
      <button type="button" className="small" onClick={() => void copy()} aria-label={`Copy: ${command}`}>
        {copied === "yes" ? "Copied" : copied === "failed" ? "Select and copy" : "Copy"}
      </button>
    </div>
  );
}
