import Link from "next/link";
import { errorMessage, tideCodeOf } from "~/trpc/errors";
import styles from "./error-notice.module.css";

/**
 * A failed call in plain words: the server's message (it names what is wrong), never the raw code
 * (kept in data-code for tests and support), and a way back when the thing does not exist.
 */
export function ErrorNotice({ error, testId = "error" }: { error: unknown; testId?: string }) {
  const code = tideCodeOf(error);
  return (
    <div role="alert" className={styles.error} data-testid={testId} data-code={code ?? undefined}>
      {errorMessage(error)}
      {code === "not_found" && (
        <>
          {" "}
          <Link href="/" data-testid="error-back">
            Back to the fleet
          </Link>
        </>
      )}
    </div>
  );
}
