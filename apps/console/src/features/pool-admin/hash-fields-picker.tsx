"use client";

import { HashField } from "@tide/contracts";
import { useId } from "react";
import { FieldError } from "~/components/field-error";
import styles from "./pool-admin.module.css";

const labels: Record<HashField, string> = {
  src_addr: "source address",
  dst_addr: "destination address",
  src_port: "source port",
  dst_port: "destination port",
};

/** In the order the data plane hashes them, whatever order they were ticked in. */
export function canonicalHashFields(fields: readonly HashField[]): HashField[] {
  return HashField.options.filter((f) => fields.includes(f));
}

/** Hash fields as checkboxes in canonical (hashing) order. */
export function HashFieldsPicker({
  value,
  onChange,
  error,
  legend = "Hash fields (hashed to pick a row)",
}: {
  value: readonly HashField[];
  onChange: (fields: HashField[]) => void;
  error?: string | undefined;
  legend?: string;
}) {
  const id = useId();
  return (
    <fieldset
      className={styles.fieldset}
      data-testid="hash-fields-picker"
      aria-describedby={error ? `${id}-error` : undefined}
    >
      <legend>{legend}</legend>
      <div className={styles.checks}>
        {HashField.options.map((f) => (
          <label key={f} title={labels[f]}>
            <input
              type="checkbox"
              checked={value.includes(f)}
              onChange={(e) =>
                onChange(canonicalHashFields(e.target.checked ? [...value, f] : value.filter((x) => x !== f)))
              }
              data-testid={`hash-field-${f}`}
            />
            <span className="mono">{f}</span>
          </label>
        ))}
      </div>
      {value.length === 0 && <span className={styles.note}>Pick at least one field.</span>}
      <FieldError id={`${id}-error`} message={error} testId="hash-fields-error" />
    </fieldset>
  );
}
