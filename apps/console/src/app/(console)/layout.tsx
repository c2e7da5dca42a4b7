import type { ReactNode } from "react";
import { requireUser } from "~/features/auth/current-user";
import { AppHeader } from "~/features/layout/app-header";
import { FleetAlarm } from "~/features/sync/fleet-alarm";
import { SessionProvider } from "~/features/session/session-context";
import styles from "./console-layout.module.css";

export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const me = await requireUser();
  return (
    <SessionProvider me={me}>
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <AppHeader me={me} />
      {/* tabIndex -1: the skip link moves focus here, so the next Tab is inside the content. */}
      <main id="main" tabIndex={-1} className={styles.main}>
        <FleetAlarm />
        {children}
      </main>
    </SessionProvider>
  );
}
