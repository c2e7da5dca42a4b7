import {
  BindsPreview,
  CreatePoolInput,
  FinishHashMigrationInput,
  HashFieldsPreview,
  PoolChangeResult,
  PoolDetail,
  PoolIdInput,
  PoolHealth,
  PoolRemoved,
  PoolTraffic,
  PoolSummary,
  PreviewBindsInput,
  PreviewHashFieldsInput,
  RemovePoolInput,
  SetBindsInput,
  SetHashFieldsInput,
  SetHealthCheckInput,
  UpdatePoolInput,
} from "@tide/contracts";
import { z } from "zod";
import { previewBinds } from "../services/tables/binds-preview.service";
import { getPool, listPools } from "../services/fleet/fleet.service";
import { poolHealth } from "../services/health/proxy-health.service";
import { poolTraffic } from "../services/telemetry/proxy-traffic.service";
import {
  createPool,
  previewHashFields,
  finishHashMigration,
  removePool,
  setBinds,
  setHashFields,
  setHealthCheck,
  updatePool,
} from "../services/tables/pool.service";
import { adminProcedure, readProcedure, router } from "../trpc";

export const poolsRouter = router({
  list: readProcedure
    .meta({ openapi: { method: "GET", path: "/pools", tags: ["pools"], summary: "List pools" } })
    .input(z.void())
    .output(z.array(PoolSummary))
    .query(({ ctx }) => listPools(ctx.db)),
  get: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/pools/{poolId}",
        tags: ["pools"],
        summary: "A pool with its proxies and directors",
      },
    })
    .input(PoolIdInput)
    .output(PoolDetail)
    .query(({ ctx, input }) => getPool(ctx.db, input.poolId)),
  create: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/pools",
        tags: ["pools"],
        summary: "Create a pool with its binds (no proxies, no table version until a proxy joins)",
      },
    })
    .input(CreatePoolInput)
    .output(PoolDetail)
    .mutation(({ ctx, input }) => createPool(ctx.db, ctx.actor, input)),
  update: adminProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/pools/{poolId}",
        tags: ["pools"],
        summary: "Rename or re-describe a pool",
      },
    })
    .input(UpdatePoolInput)
    .output(PoolDetail)
    .mutation(({ ctx, input }) => updatePool(ctx.db, ctx.actor, input)),
  setBinds: adminProcedure
    .meta({
      openapi: {
        method: "PUT",
        path: "/pools/{poolId}/binds",
        tags: ["pools"],
        summary:
          "Replace a pool's binds (new table version, no row moves); removing or narrowing a bind the " +
          "proxies report connections to is refused (422) without a reason",
      },
    })
    .input(SetBindsInput)
    .output(PoolChangeResult)
    .mutation(({ ctx, input }) => setBinds(ctx.db, ctx.actor, input)),
  previewBinds: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/pools/{poolId}/binds/preview",
        tags: ["pools"],
        summary:
          "Which binds other binds would stop forwarding, and the established connections that would break",
      },
    })
    .input(PreviewBindsInput)
    .output(BindsPreview)
    .query(({ ctx, input }) => previewBinds(ctx.db, input)),
  health: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/pools/{poolId}/health",
        tags: ["pools"],
        summary: "Each proxy's health with every serving director's view (last checks, latency)",
      },
    })
    .input(PoolIdInput)
    .output(PoolHealth)
    .query(({ ctx, input }) => poolHealth(ctx.db, input.poolId)),
  traffic: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/pools/{poolId}/traffic",
        tags: ["pools"],
        summary:
          "Each proxy's live traffic (new connections/s, established to the VIPs, second chance) and its host's open findings",
      },
    })
    .input(PoolIdInput)
    .output(PoolTraffic)
    .query(({ ctx, input }) => poolTraffic(ctx.db, input.poolId)),
  setHealthCheck: adminProcedure
    .meta({
      openapi: {
        method: "PUT",
        path: "/pools/{poolId}/health-check",
        tags: ["pools"],
        summary:
          "Set how the directors check the pool's proxies (GUE path, HTTP or TCP; interval, timeout, rise, fall)",
      },
    })
    .input(SetHealthCheckInput)
    .output(PoolDetail)
    .mutation(({ ctx, input }) => setHealthCheck(ctx.db, ctx.actor, input)),
  setHashFields: adminProcedure
    .meta({
      openapi: {
        method: "PUT",
        path: "/pools/{poolId}/hash-fields",
        tags: ["pools"],
        summary: "Replace a pool's hash fields (new table version; flows move, preview first)",
      },
    })
    .input(SetHashFieldsInput)
    .output(PoolChangeResult)
    .mutation(({ ctx, input }) => setHashFields(ctx.db, ctx.actor, input)),
  finishHashMigration: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/pools/{poolId}/hash-fields/migration/finish",
        tags: ["pools"],
        summary:
          "Finish a hash-field migration: tables drop the old fields (flows still using them are reset)",
      },
    })
    .input(FinishHashMigrationInput)
    .output(PoolChangeResult)
    .mutation(({ ctx, input }) => finishHashMigration(ctx.db, ctx.actor, input)),
  previewHashFields: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/pools/{poolId}/hash-fields/preview",
        tags: ["pools"],
        summary: "Share of client flows whose proxy would change with other hash fields",
      },
    })
    .input(PreviewHashFieldsInput)
    .output(HashFieldsPreview)
    .query(({ ctx, input }) => previewHashFields(ctx.db, input)),
  remove: adminProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/pools/{poolId}",
        tags: ["pools"],
        summary: "Remove a pool no director serves, with its proxies (any state), binds and versions",
      },
    })
    .input(RemovePoolInput)
    .output(PoolRemoved)
    .mutation(({ ctx, input }) => removePool(ctx.db, ctx.actor, input)),
});
