import Link from "next/link";
import styles from "./(console)/console-layout.module.css";

export default function NotFound() {
  return (
    <div className={styles.failure} data-testid="not-found">
      <h1>Not found</h1>
      <p className="muted">Nothing lives at this address.</p>
      <Link href="/">Back to the fleet</Link>
    </div>
  );
}
