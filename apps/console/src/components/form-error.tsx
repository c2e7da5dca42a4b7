import { fieldInWords, parseFieldPath } from "@tide/contracts";
import { errorMessage } from "~/trpc/errors";
import { fieldErrorsOf } from "./field-errors";
import styles from "./form-parts.module.css";

/** Schema errors from the API start like this; their per-field messages read better than it does. */
const SCHEMA_MESSAGE = /^Invalid input:/;

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * Why a form was not saved, in plain words (never the error code). Field messages the form shows
 * next to its inputs (`isShown(path)`) are not repeated; the others are listed here, named in words ("Binds entry 2, address"; the key on hover).
 */
export function FormError({
  error,
  isShown = () => false,
  testId = "form-error",
}: {
  error: unknown;
  isShown?: (path: string) => boolean;
  testId?: string;
}) {
  if (!error) return null;
  const fields = Object.entries(fieldErrorsOf(error));
  const elsewhere = fields.filter(([path]) => !isShown(path));
  const message = errorMessage(error);
  let body;
  if (fields.length === 0) body = message;
  else if (elsewhere.length === 0)
    body = fields.length === 1 ? "Not saved: see the marked field." : "Not saved: see the marked fields.";
  else if (!SCHEMA_MESSAGE.test(message)) body = message;
  else
    body = (
      <>
        Not saved:
        <ul>
          {elsewhere.map(([path, text]) => (
            <li key={path}>
              <span title={path}>{capitalise(fieldInWords(parseFieldPath(path)))}</span>: {text}
            </li>
          ))}
        </ul>
      </>
    );
  return (
    <div role="alert" className={styles.formError} data-testid={testId}>
      {body}
    </div>
  );
}
