"use client";

import { MAX_POOL_BINDS } from "@tide/contracts";
import { useId } from "react";
import { FieldError } from "~/components/field-error";
import { newBindRow, rowErrors, type BindRow } from "./bind-rows";
import styles from "./pool-admin.module.css";

/**
 * A pool's binds as editable rows: VIP address or CIDR, tcp/udp, port or port range. Messages
 * from the API (`binds[i].address`, …) appear under the input they name.
 */
export function BindsEditor({
  rows,
  onChange,
  fields,
}: {
  rows: BindRow[];
  onChange: (rows: BindRow[]) => void;
  fields: Readonly<Record<string, string>>;
}) {
  const id = useId();
  const update = (key: string, patch: Partial<BindRow>) =>
    onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  return (
    <fieldset className={styles.fieldset} data-testid="binds-editor">
      <legend>Binds (the VIP packets this pool receives)</legend>
      <div className={styles.bindRow} aria-hidden="true">
        <span className={styles.bindHead}>Address or CIDR</span>
        <span className={styles.bindHead}>Protocol</span>
        <span className={styles.bindHead}>Port or range</span>
        <span />
      </div>
      {rows.map((row, i) => {
        const err = rowErrors(fields, i);
        const at = (part: string) => `${id}-${i}-${part}`;
        return (
          <div key={row.key} className={styles.bindRow} data-testid="bind-row">
            <span className={styles.bindCell}>
              <input
                aria-label={`Bind ${i + 1} address`}
                value={row.address}
                onChange={(e) => update(row.key, { address: e.target.value })}
                placeholder="203.0.113.10 or 203.0.113.64/26"
                required
                aria-invalid={err.address ? true : undefined}
                aria-describedby={err.address ? at("address") : undefined}
                data-testid="bind-address"
                className="mono"
              />
              <FieldError id={at("address")} message={err.address} testId="bind-address-error" />
            </span>
            <span className={styles.bindCell}>
              <select
                aria-label={`Bind ${i + 1} protocol`}
                value={row.proto}
                onChange={(e) => update(row.key, { proto: e.target.value === "udp" ? "udp" : "tcp" })}
                aria-invalid={err.proto ? true : undefined}
                aria-describedby={err.proto ? at("proto") : undefined}
                data-testid="bind-proto"
              >
                <option value="tcp">tcp</option>
                <option value="udp">udp</option>
              </select>
              <FieldError id={at("proto")} message={err.proto} testId="bind-proto-error" />
            </span>
            <span className={styles.bindCell}>
              <input
                aria-label={`Bind ${i + 1} port or port range`}
                value={row.ports}
                onChange={(e) => update(row.key, { ports: e.target.value })}
                placeholder="443 or 8000-8099"
                inputMode="numeric"
                required
                aria-invalid={err.ports ? true : undefined}
                aria-describedby={err.ports ? at("ports") : undefined}
                data-testid="bind-ports"
                className="mono"
              />
              <FieldError id={at("ports")} message={err.ports} testId="bind-ports-error" />
            </span>
            <button
              type="button"
              className="small"
              onClick={() => onChange(rows.filter((r) => r.key !== row.key))}
              disabled={rows.length === 1}
              title={rows.length === 1 ? "A pool needs at least one bind" : undefined}
              aria-label={`Remove bind ${i + 1}`}
              data-testid="remove-bind"
            >
              Remove
            </button>
            {err.row && (
              <span className={styles.rowError}>
                <FieldError id={at("row")} message={err.row} testId="bind-row-error" />
              </span>
            )}
          </div>
        );
      })}
      <FieldError id={`${id}-all`} message={fields.binds} testId="binds-error" />
      <div className={styles.actions}>
        <button
          type="button"
          className="small"
          onClick={() => onChange([...rows, newBindRow()])}
          disabled={rows.length >= MAX_POOL_BINDS}
          data-testid="add-bind"
        >
          Add bind
        </button>
      </div>
    </fieldset>
  );
}
