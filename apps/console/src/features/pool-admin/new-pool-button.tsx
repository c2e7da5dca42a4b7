"use client";

import Link from "next/link";
import { AdminOnly } from "~/components/admin-only";
import styles from "./pool-admin.module.css";

/** "New pool" for the fleet page's pools panel (admins; others see why not). */
export function NewPoolButton() {
  return (
    <span className={styles.headerAction}>
      <AdminOnly label="New pool" testId="new-pool">
        <Link href="/pools/new" className="button" data-testid="new-pool">
          New pool
        </Link>
      </AdminOnly>
    </span>
  );
}
