import { z } from "zod";

/**
 * What the data plane's control sockets (tide-director, tide-redirect; dataplane/control/tide_control.c
 * on the C side) have in common: newline-delimited JSON, one request object per line (at most 64 KiB),
 * one reply per line in request order, `id` echoed back, replies `{id, ok: true, result}` or
 * `{id, ok: false, error}`. Each protocol (director-control.ts, redirect-control.ts) adds its commands,
 * results and error codes.
 */

/** Longest request line a daemon reads, in bytes, newline excluded; longer ones get line_too_long. */
export const CONTROL_MAX_LINE_BYTES = 64 * 1024;

// Wire primitives shared by both protocols.

export const Ipv4Address = z.ipv4().describe("IPv4 address, dotted quad");

export const Timestamp = z.iso.datetime().describe("RFC 3339 timestamp in UTC (Z)");

/**
 * A u64 counter. Past 2^53 a JSON reader rounds it (about 8 days of bytes at 100 Gb/s), so this asks
 * for a non-negative whole number, not a safe integer; JSON Schema's "integer" has no such bound.
 */
export const Counter = z
  .number()
  .nonnegative()
  .refine(Number.isInteger, "must be a whole number")
  .meta({ type: "integer" });

export const ControlRequestId = z
  .union([z.string(), z.int()])
  .describe("Caller's request id, echoed back in the reply; a string or an integer");
export type ControlRequestId = z.infer<typeof ControlRequestId>;

/** The `id` field of a request. */
export const requestIdField = ControlRequestId.optional().describe(
  "Optional request id (string or integer), echoed back in the reply's id",
);

const replyId = ControlRequestId.nullable().describe(
  "The request's id, or null if it had none or could not be read",
);

/** A successful reply carrying `result`. */
export function controlSuccess<R extends z.ZodType>(result: R) {
  return z
    .strictObject({
      id: replyId,
      ok: z.literal(true).describe("The command succeeded"),
      result,
    })
    .describe("A successful reply: the command's result");
}

/** A failed reply carrying the protocol's `error`. */
export function controlFailure<E extends z.ZodType>(error: E) {
  return z
    .strictObject({
      id: replyId,
      ok: z.literal(false).describe("The command failed; nothing changed"),
      error,
    })
    .describe("A failed reply");
}

/** One command's reply schema: its own result, or the protocol's failure. */
export function controlReply<R extends z.ZodType, F extends z.ZodObject>(result: R, failure: F) {
  return z.discriminatedUnion("ok", [controlSuccess(result), failure]);
}
