import { errorCodes, isTideError } from "@tide/contracts";

/** The JSON error body of the route handlers that are not tRPC procedures: `{ code, message }`. */
export function errorResponse(status: number, code: string, message: string): Response {
  return Response.json({ code, message }, { status });
}

export function tideErrorResponse(e: unknown): Response {
  if (isTideError(e)) {
    const res = errorResponse(errorCodes[e.code], e.code, e.message);
    const retryAfterS = e.details?.["retryAfterS"];
    // rate_limited (sign-in backoff, busy hashing) and busy say when to retry in details.retryAfterS.
    if (typeof retryAfterS === "number" && Number.isFinite(retryAfterS)) {
      res.headers.set("retry-after", String(Math.max(1, Math.ceil(retryAfterS))));
    }
    return res;
  }
  console.error(e);
  return errorResponse(500, "internal", "Internal error; see the console's log.");
}
