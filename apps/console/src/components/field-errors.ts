import { TRPCClientError } from "@trpc/client";

/** Field path ("binds[1].address") -> plain message, from a failed call's `data.details.fields`. */
export type FieldErrors = Readonly<Record<string, string>>;

function objectOrNull(value: unknown): Record<string, unknown> | null {
  return value && typeof value === "object" ? (value as Record<string, unknown>) : null;
}

/** Capitalise the first letter: zod says "must be …", next to a field it reads as a sentence. */
function sentence(message: string): string {
  return message.charAt(0).toUpperCase() + message.slice(1);
}

/**
 * The field-level messages of a failed tRPC call. Services put them in `details.fields` (the
 * input field at fault), and so does the API for schema errors; anything else has none.
 */
export function fieldErrorsOf(error: unknown): FieldErrors {
  if (!(error instanceof TRPCClientError)) return {};
  const fields = objectOrNull(objectOrNull(objectOrNull(error.data)?.details)?.fields);
  const out: Record<string, string> = {};
  for (const [path, message] of Object.entries(fields ?? {})) {
    if (typeof message === "string") out[path] = sentence(message);
  }
  return out;
}
