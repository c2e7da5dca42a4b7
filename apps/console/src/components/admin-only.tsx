"use client";

import type { ReactNode } from "react";
import { useHasScope, useMe } from "~/features/session/session-context";
import styles from "./form-parts.module.css";

/** Why an admin action is not offered, naming the user's role. */
export function useAdminReason(): string | null {
  const isAdmin = useHasScope("admin");
  const me = useMe();
  return isAdmin ? null : `Needs the admin role; you are ${me.role === "operator" ? "an" : "a"} ${me.role}.`;
}

/**
 * Renders `children` for admins; for everyone else a disabled stand-in labelled `label` with the
 * reason beside it (the API refuses these calls anyway).
 */
export function AdminOnly({
  label,
  testId,
  children,
}: {
  label: string;
  testId: string;
  children: ReactNode;
}) {
  const reason = useAdminReason();
  if (!reason) return <>{children}</>;
  return (
    <span className={styles.confirm}>
      <button type="button" disabled title={reason} data-testid={testId}>
        {label}
      </button>
      <span className={styles.disabledReason} data-testid="admin-reason">
        {reason}
      </span>
    </span>
  );
}
