import { z } from "zod";

/**
 * Booleans of API inputs (issue 27 item 4). The REST adapter (trpc-to-openapi) sets `coerce` on
 * every `z.boolean()` it finds in a procedure's input, in place, the first time it serves the
 * procedure: Boolean("false") is true, so `{"pinned":"false"}` pinned a proxy healthy, and as the
 * schema object is shared with tRPC, tRPC calls coerced from then on too. The adapter coerces
 * only the kinds boolean, number, bigint and date; these schemas are literals, which it leaves
 * alone, so a boolean stays a boolean whichever way it arrives.
 *
 * Every boolean a procedure takes is one of these two (api's boolean-inputs.test.ts checks).
 */

/** What a caller's value was, in words, for the refusal ("the string \"false\"", "the number 1"). */
function given(value: unknown): string {
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `the ${typeof value} ${String(value)}`;
}

/** A boolean in a JSON body (or a tRPC input): exactly true or false, never a string or a number. */
export function jsonBoolean() {
  return z.literal([true, false], {
    error: (issue) =>
      issue.input === undefined ? "is missing" : `must be true or false, not ${given(issue.input)}`,
  });
}

/**
 * A boolean in a query string (GET), where every value is text: exactly "true" or "false" (or a
 * JSON boolean, as tRPC sends one); "1", "yes", "" and "False" are refused, not guessed at.
 */
export function queryBoolean() {
  return z.preprocess((v) => (v === "true" ? true : v === "false" ? false : v), jsonBoolean());
}
