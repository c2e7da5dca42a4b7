import { errorCodes, isTideError } from "@tide/contracts";
import { busyErrorFrom } from "../db";

/** The JSON error body of the route handlers that are not tRPC procedures: `{ code, message }`. */
export function errorResponse(status: number, code: string, message: string): Response {
  return Response.json({ code, message }, { status });
}

/**
 * A thrown error as the answer of a route handler that is not a tRPC procedure (table download,
 * sign-in, live streams): a TideError's code, a database timeout as 503 busy (busyErrorFrom),
 * anything else 500 with the error in the log only.
 */
export function tideErrorResponse(e: unknown): Response {
  const error = isTideError(e) ? e : busyErrorFrom(e);
  if (error) {
    const res = errorResponse(errorCodes[error.code], error.code, error.message);
    const retryAfterS = error.details?.["retryAfterS"];
    // rate_limited (sign-in backoff, busy hashing) and busy say when to retry in details.retryAfterS.
    if (typeof retryAfterS === "number" && Number.isFinite(retryAfterS)) {
      res.headers.set("retry-after", String(Math.max(1, Math.ceil(retryAfterS))));
    }
    return res;
  }
  console.error(e);
  return errorResponse(500, "internal", "Internal error; see the console's log.");
}
