/**
 * The closed set of error codes every Tide API returns (dub habit). Each maps to one HTTP status;
 * the message is for humans and says what is wrong and what to do.
 */
export const errorCodes = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  invalid_transition: 409,
  invariant_violation: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
  /** The database is busy (a lock or statement timed out): retry after the Retry-After header. */
  busy: 503,
  /**
   * The client went away before the work began (nginx's 499): nothing was done. Nobody reads the
   * answer; it keeps abandoned requests (an agent that timed out) from costing the console work.
   */
  client_closed: 499,
} as const;

export type ErrorCode = keyof typeof errorCodes;

export class TideError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = "TideError";
    this.code = code;
    this.details = details;
  }

  get httpStatus(): number {
    return errorCodes[this.code];
  }
}

export function isTideError(e: unknown): e is TideError {
  return e instanceof TideError;
}
