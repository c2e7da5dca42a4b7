import {
  AgentHealthReply,
  AgentHealthReport,
  AgentHello,
  AgentHelloReply,
  AgentObservationsIn,
  AgentObservationsReply,
  DesiredState,
} from "@tide/contracts";
import { z } from "zod";
import { listenForDesiredChanges } from "../live/host-live";
import { agentDesired, agentHello } from "../services/fleet/agent.service";
import { DESIRED_WAIT_MAX_MS } from "../services/fleet/desired-state.service";
import { acceptObservations } from "../services/telemetry/ingest.service";
import { recordHealthReport } from "../services/health/proxy-health.service";
import { agentProcedure, router } from "../trpc";

/** tide-agent <-> console (contracts/agent-protocol.ts); host tokens only. */
export const agentRouter = router({
  hello: agentProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/agent/hello",
        tags: ["agent"],
        summary: "Agent hello: register the host's roles, probes and data plane; get the desired state",
      },
    })
    .input(AgentHello)
    .output(AgentHelloReply)
    .mutation(({ ctx, input }) => agentHello(ctx.db, ctx.host, input)),
  observations: agentProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/agent/observations",
        tags: ["agent"],
        summary:
          "Send a batch of observations; samples not stored (duplicate, too old, or more than 5 min ahead of the console's clock) are listed in `refused` with the reason; `batchIntervalMs` asks the agent to hold samples and send that often; findings are re-evaluated in the background",
      },
    })
    .input(AgentObservationsIn)
    .output(AgentObservationsReply)
    .mutation(({ ctx, input }) => acceptObservations(ctx, input)),
  health: agentProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/agent/health",
        tags: ["agent"],
        summary:
          "A director host's views of the proxies it checks; the console combines all directors' views and sets each proxy's table health",
      },
    })
    .input(AgentHealthReport)
    .output(AgentHealthReply)
    .mutation(({ ctx, input }) => recordHealthReport(ctx.db, ctx.host, input)),
  desired: agentProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/agent/desired",
        tags: ["agent"],
        summary:
          "The host's desired state; with `after` (a revision) and `waitMs`, answers as soon as the revision differs (long poll)",
      },
    })
    .input(
      z.object({
        after: z.coerce
          .number()
          .int()
          .min(0)
          .optional()
          .describe("The revision the agent has; with waitMs, wait until the desired state differs from it"),
        waitMs: z.coerce
          .number()
          .int()
          .min(0)
          .max(DESIRED_WAIT_MAX_MS)
          .optional()
          .describe(`How long to wait for a change, ms (at most ${DESIRED_WAIT_MAX_MS})`),
      }),
    )
    .output(DesiredState)
    .query(({ ctx, input }) =>
      agentDesired(
        ctx.db,
        ctx.host,
        { after: input.after, waitMs: input.waitMs ?? 0 },
        listenForDesiredChanges,
      ),
    ),
});
