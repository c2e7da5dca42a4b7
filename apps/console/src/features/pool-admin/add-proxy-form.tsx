"use client";

import type { ProxyCreated } from "@tide/contracts";
import { useMutation } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { FieldError } from "~/components/field-error";
import { fieldErrorsOf } from "~/components/field-errors";
import { FormError } from "~/components/form-error";
import { useTRPC } from "~/trpc/react";
import styles from "./pool-admin.module.css";
import { useInvalidateFleet } from "./use-invalidate-fleet";

function joinedText(p: ProxyCreated): string {
  if (p.state === "active") {
    return p.tableVersion
      ? `joined active (the pool carries no traffic yet); table v${p.tableVersion.version} written.`
      : "joined active (the pool carries no traffic yet).";
  }
  return "joined inactive (the pool carries traffic): fill it, then activate it, to put it in rotation.";
}

/** Add a proxy (address, host name) to a pool; stays open to add the next one. */
export function AddProxyForm({ poolId }: { poolId: string }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateFleet();
  const id = useId();
  const [address, setAddress] = useState("");
  const [hostname, setHostname] = useState("");
  const [added, setAdded] = useState<ProxyCreated[]>([]);
  const create = useMutation(
    trpc.proxies.create.mutationOptions({
      onSuccess: async (proxy) => {
        setAdded((a) => [...a, proxy]);
        setAddress("");
        setHostname("");
        await invalidate();
      },
    }),
  );
  const fields = fieldErrorsOf(create.error);

  function submit(e: FormEvent) {
    e.preventDefault();
    create.mutate({ poolId, address: address.trim(), hostname: hostname.trim() });
  }

  return (
    <form className={styles.form} onSubmit={submit} data-testid="add-proxy-form" noValidate>
      <div className={styles.actions}>
        <label className={styles.field}>
          Address (IPv4, the GUE destination)
          <input
            value={address}
            onChange={(e) => setAddress(e.target.value)}
            required
            placeholder="10.20.0.11"
            className="mono"
            aria-invalid={fields.address ? true : undefined}
            aria-describedby={fields.address ? `${id}-address` : undefined}
            data-testid="proxy-address-input"
          />
          <FieldError id={`${id}-address`} message={fields.address} testId="proxy-address-error" />
        </label>
        <label className={styles.field}>
          Host name
          <input
            value={hostname}
            onChange={(e) => setHostname(e.target.value)}
            required
            placeholder="proxy-11.example.net"
            aria-invalid={fields.hostname ? true : undefined}
            aria-describedby={fields.hostname ? `${id}-hostname` : undefined}
            data-testid="proxy-hostname-input"
          />
          <FieldError id={`${id}-hostname`} message={fields.hostname} testId="proxy-hostname-error" />
        </label>
      </div>
      <div className={styles.actions}>
        <button
          type="submit"
          className="primary"
          disabled={create.isPending || address.trim() === "" || hostname.trim() === ""}
          data-testid="add-proxy-submit"
        >
          {create.isPending ? "Adding…" : "Add proxy"}
        </button>
      </div>
      <FormError error={create.error} isShown={(f) => f === "address" || f === "hostname"} />
      {added.length > 0 && (
        <ul className={styles.done} data-testid="added-proxies">
          {added.map((p) => (
            <li key={p.id} data-testid="added-proxy" data-state={p.state}>
              <strong>{p.hostname}</strong> <span className="mono">{p.address}</span> {joinedText(p)}
            </li>
          ))}
        </ul>
      )}
    </form>
  );
}
