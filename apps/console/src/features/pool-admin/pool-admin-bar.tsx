"use client";

import Link from "next/link";
import { useState } from "react";
import { useAdminReason } from "~/components/admin-only";
import { ModalDialog } from "~/components/modal-dialog";
import { AddProxyForm } from "./add-proxy-form";
import styles from "./pool-admin.module.css";

/** The pool page's admin controls: its settings page and adding proxies. */
export function PoolAdminBar({ poolId, poolName }: { poolId: string; poolName: string }) {
  const reason = useAdminReason();
  const [adding, setAdding] = useState(false);
  if (reason) {
    return (
      <div className={styles.bar} data-testid="pool-admin-bar" data-admin="false">
        <button type="button" disabled title={reason} data-testid="open-add-proxy">
          Add proxy
        </button>
        <button type="button" disabled title={reason} data-testid="pool-settings-link">
          Settings
        </button>
        <span className={styles.note} data-testid="admin-reason">
          Changing the pool: {reason}
        </span>
      </div>
    );
  }
  return (
    <div className={styles.bar} data-testid="pool-admin-bar" data-admin="true">
      <button type="button" onClick={() => setAdding(true)} data-testid="open-add-proxy">
        Add proxy
      </button>
      <Link href={`/pools/${poolId}/settings`} className="button" data-testid="pool-settings-link">
        Settings
      </Link>
      {adding && (
        <ModalDialog
          title={`Add a proxy to ${poolName}`}
          onClose={() => setAdding(false)}
          testId="add-proxy-dialog"
        >
          <AddProxyForm poolId={poolId} />
          <div className={styles.actions}>
            <button type="button" onClick={() => setAdding(false)} data-testid="close-add-proxy">
              Done
            </button>
          </div>
        </ModalDialog>
      )}
    </div>
  );
}
