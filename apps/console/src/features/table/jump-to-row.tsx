"use client";

import { forwardRef, useState, type FormEvent } from "react";
import styles from "./forwarding-table.module.css";
import { parseRowNumber } from "./row-number";

/** "0x1a2b" or "6699" -> scroll to that row. Press "/" anywhere on the page to focus it. */
export const JumpToRow = forwardRef<HTMLInputElement, { onJump: (row: number) => void }>(function JumpToRow(
  { onJump },
  ref,
) {
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  function submit(e: FormEvent) {
    e.preventDefault();
    const row = parseRowNumber(text);
    if (row === null) {
      setError(`"${text.trim()}" is not a row: type 0x0000–0xffff or 0–65535.`);
      return;
    }
    setError(null);
    onJump(row);
  }
  return (
    <form onSubmit={submit} className={styles.group} role="search">
      <label>
        Row{" "}
        <input
          ref={ref}
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            setError(null); // a message about what was typed before is stale now
          }}
          placeholder="0x1a2b or 6699  (/)"
          size={16}
          aria-invalid={error !== null}
          data-testid="jump-row"
        />
      </label>
      <button type="submit" className="small">
        Go
      </button>
      {error && (
        <span className={styles.error} role="alert">
          {error}
        </span>
      )}
    </form>
  );
});
