import { FleetSync, PoolIdInput, PoolSync } from "@tide/contracts";
import { z } from "zod";
import { fleetSync, poolSync } from "../services/telemetry/director-sync.service";
import { readProcedure, router } from "../trpc";

/** Whether the directors serve what the console wants (services/telemetry/director-sync.service.ts). */
export const syncRouter = router({
  fleet: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/sync",
        tags: ["directors"],
        summary:
          "Every director: desired and served table per pool, in sync, propagating, behind or unknown, from the last report",
      },
    })
    .input(z.void())
    .output(FleetSync)
    .query(({ ctx }) => fleetSync(ctx.db)),
  pool: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/pools/{poolId}/sync",
        tags: ["pools"],
        summary: "Whether the pool's current version is served by every director assigned to it",
      },
    })
    .input(PoolIdInput)
    .output(PoolSync)
    .query(({ ctx, input }) => poolSync(ctx.db, input.poolId)),
});
