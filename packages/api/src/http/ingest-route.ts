import { AgentObservationsReply, findUnsafeText, jsonMayHoldUnsafeText } from "@tide/contracts";
import type { HostCaller } from "../auth/actor";
import type { Context } from "../context";
import { busyErrorFrom } from "../db";
import { acceptObservations } from "../services/telemetry/ingest.service";
import { acceptsBatch } from "./ingest-batch-check";

/**
 * The direct path of POST /api/v1/agent/observations: the batch an agent sends every few seconds,
 * the console's hottest route (1,000 agents: ~100 a second).
 *
 * Through the REST adapter (trpc-to-openapi over tRPC) a batch cost about twice the CPU of storing
 * it: the adapter builds its procedure table for every request, parses the body a second time,
 * and tRPC validates the input with zod's asynchronous parse, which skips zod's compiled fast path.
 * Here the body routes.ts already read and parsed is checked as the procedure would check it (text
 * PostgreSQL can store, then the AgentObservationsIn contract: ingest-batch-check.ts, the same
 * answers as zod at half the cost) and handed to the procedure's own function (acceptObservations),
 * and the reply is checked against its contract.
 *
 * Only a batch that goes through untouched is answered here. Anything else returns null and the
 * request takes the REST adapter with the same body, so every refusal and error (400 with the
 * fields, 403 for another host's samples, 499, the audit of refusals) is the procedure's, word for
 * word; only a database timeout is thrown on, for routes.ts to answer 503 busy as the procedure
 * would. That is safe because nothing here changes anything before it fails, except one case: a
 * step after the batch was stored throws (director sync, the desired revision). The adapter then
 * runs the batch again, finds every sample stored and answers as it would have answered the
 * agent's retry: accepted 0, each sample refused as a duplicate (it is stored). A busy answer in
 * that case is safe too: the agent resends, and is told the same.
 */
export async function ingestDirect(
  ctx: Context & { host: HostCaller },
  body: unknown,
  /** The JSON text `body` was parsed from: stored as it is (IngestOptions.sourceJson). */
  text: string,
): Promise<Response | null> {
  if ((jsonMayHoldUnsafeText(text) && findUnsafeText(body)) || !acceptsBatch(body)) return null;
  let reply: AgentObservationsReply;
  try {
    reply = AgentObservationsReply.parse(await acceptObservations(ctx, body, text));
  } catch (e) {
    // A database timeout is answered 503 busy at once (routes.ts), not run again through the
    // adapter: a second wait for a connection (5 s) would outlast the agent's 10 s time limit.
    if (busyErrorFrom(e)) throw e;
    return null;
  }
  return new Response(JSON.stringify(reply), {
    status: 200,
    headers: { "content-type": "application/json" },
  });
}
