import { getDb, hostLiveUpdate, listenForHostSamples, tideErrorResponse } from "@tide/api";
import {
  endWithReaderRights,
  eventStreamResponse,
  HEARTBEAT_MS,
  refuseUnlessReader,
} from "../../event-stream";

/**
 * GET /api/live/hosts/{hostId}: Server-Sent Events for the host page. Authenticated like every page
 * (session cookie, read scope). Sends `update` with the last five minutes on connect, then one
 * `update` with only the new samples each time ingest NOTIFYs tide_observations for this host, one
 * more `update` (possibly without new points) when the findings evaluator says the host's findings
 * changed (the page refetches findings on every update), and a `heartbeat` every 15 s (proxies and
 * the browser keep the connection open). Notifications come over the process's one shared LISTEN
 * connection (live/host-live.ts); the subscription ends when the browser goes away, or with an
 * `end` event when the caller may no longer read (checked every LIVE_RECHECK_MS, 5 s).
 */
export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export async function GET(req: Request, { params }: { params: Promise<{ hostId: string }> }) {
  const { hostId } = await params;
  const db = getDb();
  const refused = await refuseUnlessReader(db, req);
  if (refused) return refused;
  let first;
  try {
    first = await hostLiveUpdate(db, hostId, null);
  } catch (e) {
    return tideErrorResponse(e);
  }
  const host = first.hostId;

  const encoder = new TextEncoder();
  let close = () => {};
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      let open = true;
      let lastAt = first.sampledAt;
      const send = (event: string, data: unknown) => {
        if (open) controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
      };
      // One read at a time; notifications that arrive during a read are folded into one more read.
      // `force`: findings changed, so send an update even without new samples.
      let busy = false;
      let again = false;
      let forced = false;
      const pull = async (force = false) => {
        forced ||= force;
        if (busy) {
          again = true;
          return;
        }
        busy = true;
        try {
          do {
            again = false;
            const sendAnyway = forced;
            forced = false;
            const update = await hostLiveUpdate(db, host, lastAt);
            if (!open) return;
            if (update.sampledAt !== lastAt || sendAnyway) {
              lastAt = update.sampledAt;
              send("update", update);
            }
          } while (again && open);
        } catch (e) {
          console.error(`live host ${host}: read failed`, e);
        } finally {
          busy = false;
        }
      };

      let unlisten: (() => void) | null = null;
      let stopChecking = () => {};
      const heartbeat = setInterval(() => send("heartbeat", { at: new Date().toISOString() }), HEARTBEAT_MS);
      close = () => {
        if (!open) return;
        open = false;
        clearInterval(heartbeat);
        stopChecking();
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

      send("update", first);
      try {
        unlisten = await listenForHostSamples(host, (change) => void pull(change === "findings"));
        if (!open) unlisten();
      } catch (e) {
        console.error(`live host ${host}: could not LISTEN`, e);
        close();
        return;
      }
      // Samples stored between the first read and the LISTEN.
      await pull();
    },
    cancel() {
      close();
    },
  });
  return eventStreamResponse(stream);
}
