import { HostId, HostRecordId, HostTokenId } from "@tide/contracts";
import { z } from "zod";
import { createHostToken, listHostTokens, revokeHostToken } from "../auth/host-tokens.service";
import {
  HostDetail,
  HostRef,
  HostSummary,
  HostTokenSummary,
  PmtuTargetSpec,
  PmtuTargetsInput,
  Series,
  SeriesInput,
} from "../schemas/hosts.schema";
import { HistoryInput, HostHistory } from "../schemas/history.schema";
import { HostLatency, LatencyInput } from "../schemas/latency.schema";
import { hostHistory } from "../services/telemetry/host-history.service";
import { hostLatency } from "../services/telemetry/host-latency.service";
import { counterSeries, getHost, listHosts } from "../services/fleet/host.service";
import { removeHost } from "../services/fleet/host-removal.service";
import { setPmtuTargets } from "../services/fleet/pmtu-targets.service";
import { adminProcedure, operateProcedure, readProcedure, router } from "../trpc";

export const hostsRouter = router({
  list: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/hosts",
        tags: ["hosts"],
        summary: "Hosts running tide-agent, with health",
      },
    })
    .input(z.void())
    .output(z.array(HostSummary))
    .query(({ ctx }) => listHosts(ctx.db)),
  get: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/hosts/{hostId}",
        tags: ["hosts"],
        summary: "A host with probes, data plane and its latest sample per namespace",
      },
    })
    .input(z.object({ hostId: HostRef }))
    .output(HostDetail)
    .query(({ ctx, input }) => getHost(ctx.db, input.hostId)),
  latency: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/hosts/{hostId}/latency",
        tags: ["hosts"],
        summary: "connect() latency per process and NET_RX run times per CPU over a recent window",
      },
    })
    .input(LatencyInput)
    .output(HostLatency)
    .query(({ ctx, input }) => hostLatency(ctx.db, input)),
  history: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/hosts/{hostId}/history",
        tags: ["hosts"],
        summary:
          "Counter rates per namespace over a range (range=15m|1h|24h|7d, or from and to), from the 1 s samples or the one-minute rollups",
      },
    })
    .input(HistoryInput)
    .output(HostHistory)
    .query(({ ctx, input }) => hostHistory(ctx.db, input)),
  setPmtuTargets: operateProcedure
    .meta({
      openapi: {
        method: "PUT",
        path: "/hosts/{hostId}/pmtu-targets",
        tags: ["hosts"],
        summary: "Set the path MTU targets the host's agent checks (replaces the list; audited)",
      },
    })
    .input(PmtuTargetsInput)
    .output(
      z.object({
        hostId: z.string(),
        pmtuTargets: z.array(PmtuTargetSpec),
        desiredRevision: z.int().min(0).describe("Desired-state revision the agent will fetch"),
      }),
    )
    .mutation(({ ctx, input }) => setPmtuTargets(ctx.db, ctx.actor, input)),
  remove: adminProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/hosts/{hostId}",
        tags: ["hosts"],
        summary:
          "Remove a host: its host tokens stop working at once; its samples and findings go with it (refused while a director has its name)",
      },
    })
    .input(z.object({ hostId: HostRef }))
    .output(
      z.object({
        removed: z.object({
          id: HostRecordId,
          name: HostId,
          tokenIds: z.array(HostTokenId).describe("The host tokens that no longer work"),
        }),
      }),
    )
    .mutation(async ({ ctx, input }) => ({ removed: await removeHost(ctx.db, ctx.actor, input.hostId) })),
});

export const observationsRouter = router({
  series: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/hosts/{hostId}/observations",
        tags: ["hosts"],
        summary: "Counter values and per-second rates of one namespace over time",
      },
    })
    .input(SeriesInput)
    .output(Series)
    .query(({ ctx, input }) => counterSeries(ctx.db, input)),
});

export const hostTokensRouter = router({
  list: adminProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/host-tokens",
        tags: ["hosts"],
        summary: "List host tokens (never their secrets)",
      },
    })
    .input(z.object({ hostname: HostId.optional() }))
    .output(z.array(HostTokenSummary))
    .query(({ ctx, input }) => listHostTokens(ctx.db, input.hostname)),
  create: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/host-tokens",
        tags: ["hosts"],
        summary: "Create a host token for a host name (shown once; registers the host if new)",
      },
    })
    .input(z.object({ hostname: HostId }))
    .output(
      z.object({
        token: z.string().describe("The secret (tide_host_…), shown only now"),
        summary: HostTokenSummary,
      }),
    )
    .mutation(({ ctx, input }) => createHostToken(ctx.db, ctx.actor, input)),
  revoke: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/host-tokens/{tokenId}/revoke",
        tags: ["hosts"],
        summary: "Revoke a host token",
      },
    })
    .input(z.object({ tokenId: HostTokenId }))
    .output(HostTokenSummary)
    .mutation(({ ctx, input }) => revokeHostToken(ctx.db, ctx.actor, input.tokenId)),
});
