import { liveReaderRefusal, resolveActor, tideErrorResponse, watchLiveReader } from "@tide/api";
import type { Db } from "@tide/db";

/** Seconds between heartbeats of a live stream; well under common proxies' idle timeouts (60 s). */
export const HEARTBEAT_MS = 15_000;

/**
 * A live page's stream is read like the page: a session (or token) with the read scope. A database
 * timeout looking the caller up is 503 busy with Retry-After (tideErrorResponse), not Next's 500.
 */
export async function refuseUnlessReader(db: Db, req: Request): Promise<Response | null> {
  let actor;
  try {
    actor = await resolveActor(db, req.headers);
  } catch (e) {
    return tideErrorResponse(e);
  }
  const refusal = liveReaderRefusal(actor);
  if (!refusal) return null;
  return Response.json({ code: refusal.code, message: refusal.message }, { status: refusal.status });
}

/**
 * An open stream ends with the rights that opened it (issue 27 item 3): the caller is checked
 * again every LIVE_RECHECK_MS (packages/api live/reader-access.ts says why a timer, not each push),
 * and when the token was revoked, the session ended, the user was disabled or lost the read scope,
 * the stream sends `end` with { code, message } and closes. The browser's reconnect is then
 * refused like any request (401/403), so the page stops. Returns the function that stops checking.
 */
export function endWithReaderRights(
  db: Db,
  req: Request,
  send: (event: "end", data: { code: string; message: string }) => void,
  close: () => void,
): () => void {
  return watchLiveReader(db, req.headers, (why) => {
    send("end", { code: why.code, message: why.message });
    close();
  });
}

/** A Server-Sent Events response that no proxy buffers or caches. */
export function eventStreamResponse(stream: ReadableStream<Uint8Array>): Response {
  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
}
