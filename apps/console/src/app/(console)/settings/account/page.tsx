import type { Metadata } from "next";
import { requireUser } from "~/features/auth/current-user";
import styles from "~/features/account/account.module.css";
import { ChangePasswordForm } from "~/features/account/change-password-form";

export const metadata: Metadata = { title: "Account" };

export default async function AccountPage() {
  const me = await requireUser();
  return (
    <div className={styles.page}>
      <h1>Account</h1>
      <p>
        Signed in as <strong data-testid="account-email">{me.email}</strong> ({me.role}).
      </p>
      <ChangePasswordForm email={me.email} />
    </div>
  );
}
