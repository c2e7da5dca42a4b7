import { resolveActor, tideErrorResponse } from "@tide/api";
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
  if (!actor) return Response.json({ code: "unauthorized", message: "Sign in first." }, { status: 401 });
  if (!actor.scopes.includes("read"))
    return Response.json({ code: "forbidden", message: "This needs the 'read' scope." }, { status: 403 });
  return null;
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
