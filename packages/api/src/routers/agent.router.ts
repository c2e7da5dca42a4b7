import {
  AgentHello,
  AgentHelloReply,
  AgentObservationsIn,
  AgentObservationsReply,
  DesiredState,
} from "@tide/contracts";
import { z } from "zod";
import { ingestEnv } from "../env";
import { agentDesired, agentHello } from "../services/agent.service";
import { ingestObservations } from "../services/ingest.service";
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
          "Send a batch of observations (duplicates by time are ignored); findings are re-evaluated in the background",
      },
    })
    .input(AgentObservationsIn)
    .output(AgentObservationsReply)
    .mutation(async ({ ctx, input }) => {
      const r = await ingestObservations(ctx.db, ctx.host, input, {
        retentionMinutes: ingestEnv().TIDE_OBSERVATION_RETENTION_MINUTES,
      });
      return { accepted: r.accepted, desiredRevision: r.desiredRevision };
    }),
  desired: agentProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/agent/desired",
        tags: ["agent"],
        summary: "The host's desired state",
      },
    })
    .input(z.void())
    .output(DesiredState)
    .query(({ ctx }) => agentDesired(ctx.db, ctx.host)),
});
