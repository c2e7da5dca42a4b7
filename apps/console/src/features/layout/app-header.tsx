import type { Me } from "@tide/contracts";
import Link from "next/link";
import styles from "./app-header.module.css";
import { HeaderMenu } from "./header-menu";
import { NavLinks } from "./nav-links";

export function AppHeader({ me }: { me: Me }) {
  return (
    <header className={styles.header}>
      <Link href="/" className={styles.brand}>
        TIDE
      </Link>
      <span className={styles.role} data-testid="signed-in-role">
        {me.role}
      </span>
      <HeaderMenu>
        <NavLinks />
        <div className={styles.user}>
          <Link
            href="/settings/account"
            className={styles.email}
            data-testid="signed-in-user"
            title={`${me.name}: your account, password`}
          >
            {me.email}
          </Link>
          <form method="post" action="/api/auth/sign-out">
            <button type="submit" className="small">
              Sign out
            </button>
          </form>
        </div>
      </HeaderMenu>
    </header>
  );
}
