import { TRPCClientError } from "@trpc/client";

/** The Tide error code of a failed call (`data.tideCode`), or null when it is not a tRPC error. */
export function tideCodeOf(error: unknown): string | null {
  if (!(error instanceof TRPCClientError)) return null;
  const data: unknown = error.data;
  if (data && typeof data === "object" && "tideCode" in data && typeof data.tideCode === "string") {
    return data.tideCode;
  }
  return null;
}

/** A message for people: the server's message (it says what is wrong and what to do). */
export function errorMessage(error: unknown): string {
  if (error instanceof Error && error.message) return error.message;
  return "Something went wrong.";
}

export function isUnauthorized(error: unknown): boolean {
  return tideCodeOf(error) === "unauthorized";
}
