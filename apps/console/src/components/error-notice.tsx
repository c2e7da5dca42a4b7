import { errorMessage, tideCodeOf } from "~/trpc/errors";
import styles from "./error-notice.module.css";

/** A failed call, with the server's message (it says what is wrong) and the stable error code. */
export function ErrorNotice({ error, testId = "error" }: { error: unknown; testId?: string }) {
  const code = tideCodeOf(error);
  return (
    <div role="alert" className={styles.error} data-testid={testId} data-code={code ?? undefined}>
      {code && <span className={styles.code}>{code}</span>}
      {errorMessage(error)}
    </div>
  );
}
