"use client";

import type { PoolDetail, Proxy } from "@tide/contracts";
import { useMutation } from "@tanstack/react-query";
import { useId } from "react";
import { ConfirmAction } from "~/components/confirm-action";
import { FormError } from "~/components/form-error";
import { StateBadge } from "~/components/state-badge";
import { useTRPC } from "~/trpc/react";
import { AddProxyForm } from "./add-proxy-form";
import styles from "./pool-admin.module.css";
import { useInvalidateFleet } from "./use-invalidate-fleet";

const NOT_INACTIVE = "Only an inactive proxy can be removed: drain it and set it inactive first.";

function RemoveProxy({ proxy }: { proxy: Proxy }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateFleet();
  const remove = useMutation(trpc.proxies.remove.mutationOptions({ onSuccess: () => invalidate() }));
  return (
    <>
      <ConfirmAction
        label="Remove"
        question={`Remove ${proxy.hostname}? A table version without it is written.`}
        onConfirm={() => remove.mutate({ proxyId: proxy.id, reason: `remove ${proxy.hostname}` })}
        pending={remove.isPending}
        disabled={proxy.state !== "inactive"}
        title={proxy.state !== "inactive" ? NOT_INACTIVE : undefined}
        testId="remove-proxy"
      />
      <FormError error={remove.error} />
    </>
  );
}

/** The pool's proxies: remove inactive ones, add new ones. */
export function PoolProxiesAdmin({ pool }: { pool: PoolDetail }) {
  const id = useId();
  return (
    <section className="panel" aria-labelledby={`${id}-h`}>
      <header>
        <h2 id={`${id}-h`}>Proxies</h2>
        <span className="muted">{pool.proxies.length}</span>
      </header>
      {/* Focusable so the keyboard can scroll it sideways on a narrow screen. */}
      <div className={styles.scroll} tabIndex={0} role="region" aria-labelledby={`${id}-h`}>
        <table className="data" data-testid="admin-proxies-table">
          <thead>
            <tr>
              <th>Host name</th>
              <th>Address</th>
              <th>State</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {pool.proxies.map((p) => (
              <tr key={p.id} data-testid="admin-proxy-row" data-hostname={p.hostname} data-state={p.state}>
                <td>{p.hostname}</td>
                <td className="mono">{p.address}</td>
                <td>
                  <StateBadge state={p.state} />
                </td>
                <td>
                  <RemoveProxy proxy={p} />
                </td>
              </tr>
            ))}
            {pool.proxies.length === 0 && (
              <tr>
                <td colSpan={4} className="muted">
                  No proxies yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      <div className={`body ${styles.form}`}>
        <p className={styles.note}>{NOT_INACTIVE}</p>
        <h3>Add a proxy</h3>
        <AddProxyForm poolId={pool.id} />
      </div>
    </section>
  );
}
