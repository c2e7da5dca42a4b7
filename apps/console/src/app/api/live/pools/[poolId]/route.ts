import { getDb, listenForPool, tideErrorResponse } from "@tide/api";
import {
  endWithReaderRights,
  eventStreamResponse,
  HEARTBEAT_MS,
  refuseUnlessReader,
} from "../../event-stream";

/**
 * GET /api/live/pools/{poolId}: Server-Sent Events for the pool page. Authenticated like every page
 * (session cookie, read scope). Sends `changed` whenever something the page shows may have changed
 * (a director's health verdict or a check's outcome, a table version: drains, fills, health
 * changes; pool and director changes), at most every CHANGED_MIN_GAP_MS; `traffic` when a proxy
 * host's new figures arrived (at most once a second); and a `heartbeat` every 15 s. The page
 * re-reads its queries on `changed` (it keeps a slow poll as a fallback). The stream ends with an
 * `end` event when the caller may no longer read (checked every LIVE_RECHECK_MS, 5 s).
 */
export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** Notifications closer than this are folded into one `changed` (a burst of health reports). */
const CHANGED_MIN_GAP_MS = 250;
/** Proxy hosts send a batch a second each: one `traffic` event a second at most. */
const TRAFFIC_MIN_GAP_MS = 1_000;

export async function GET(req: Request, { params }: { params: Promise<{ poolId: string }> }) {
  const { poolId } = await params;
  const db = getDb();
  const refused = await refuseUnlessReader(db, req);
  if (refused) return refused;
  let pool;
  try {
    pool = await db.pool.findUnique({ where: { id: poolId }, select: { id: true } });
  } catch (e) {
    return tideErrorResponse(e); // a database timeout: 503 busy with Retry-After
  }
  if (!pool)
    return Response.json({ code: "not_found", message: `Pool ${poolId} does not exist.` }, { status: 404 });

  const encoder = new TextEncoder();
  let close = () => {};
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      let open = true;
      const send = (event: string, data: unknown) => {
        if (open) controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
      };
      // One timer per event kind: a burst of notifications is one event.
      const pending = new Map<string, NodeJS.Timeout>();
      const changed = (what: "changed" | "traffic") => {
        if (pending.has(what) || !open) return;
        pending.set(
          what,
          setTimeout(
            () => {
              pending.delete(what);
              send(what, { at: new Date().toISOString() });
            },
            what === "traffic" ? TRAFFIC_MIN_GAP_MS : CHANGED_MIN_GAP_MS,
          ),
        );
      };
      let unlisten: (() => void) | null = null;
      let stopChecking = () => {};
      const heartbeat = setInterval(() => send("heartbeat", { at: new Date().toISOString() }), HEARTBEAT_MS);
      close = () => {
        if (!open) return;
        open = false;
        clearInterval(heartbeat);
        stopChecking();
        for (const t of pending.values()) clearTimeout(t);
        unlisten?.();
        try {
          controller.close();
        } catch {
          // already closed by the client
        }
      };
      req.signal.addEventListener("abort", close);
      // Ends the stream when the caller may no longer read (a revoked token, a disabled user).
      stopChecking = endWithReaderRights(db, req, send, close);
      send("hello", { poolId: pool.id });
      try {
        unlisten = await listenForPool(pool.id, changed);
        if (!open) unlisten();
      } catch (e) {
        console.error(`live pool ${pool.id}: could not LISTEN`, e);
        close();
      }
    },
    cancel() {
      close();
    },
  });
  return eventStreamResponse(stream);
}
