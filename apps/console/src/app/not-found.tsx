import Link from "next/link";
import { currentUser } from "~/features/auth/current-user";
import { AppHeader } from "~/features/layout/app-header";
import { SessionProvider } from "~/features/session/session-context";
import styles from "./(console)/console-layout.module.css";

/** Any unknown address: with the app header for a signed-in user, so the way on is one click. */
export default async function NotFound() {
  const me = await currentUser();
  const body = (
    <div className={styles.failure} data-testid="not-found">
      <h1>Not found</h1>
      <p className="muted">Nothing lives at this address.</p>
      <Link href="/">Back to the fleet</Link>
    </div>
  );
  if (!me) return body;
  return (
    <SessionProvider me={me}>
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <AppHeader me={me} />
      <main id="main" tabIndex={-1} className={styles.main}>
        {body}
      </main>
    </SessionProvider>
  );
}
