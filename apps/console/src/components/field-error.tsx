import styles from "./form-parts.module.css";

/**
 * The API's message for one input, shown under it. Give the input `aria-describedby={id}` and
 * `aria-invalid` so screen readers announce it with the field.
 */
export function FieldError({
  id,
  message,
  testId,
}: {
  id: string;
  message: string | undefined;
  testId?: string;
}) {
  if (!message) return null;
  return (
    <span id={id} className={styles.fieldError} data-testid={testId ?? "field-error"}>
      {message}
    </span>
  );
}
