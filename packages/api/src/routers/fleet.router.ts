import {
  ChangePasswordInput,
  ChangePasswordResult,
  Director,
  FleetLive,
  Me,
  PoolSummary,
  Proxy,
  PoolId,
} from "@tide/contracts";
import { z } from "zod";
import { changeOwnPassword } from "../auth/account.service";
import { fleetOverview, listProxies } from "../services/fleet/fleet.service";
import { fleetLive } from "../services/telemetry/proxy-traffic.service";
import { publicProcedure, readProcedure, router } from "../trpc";
import { TRPCError } from "@trpc/server";

export const authRouter = router({
  me: publicProcedure
    .meta({
      openapi: { method: "GET", path: "/me", tags: ["auth"], summary: "Who am I (user, role, scopes)" },
    })
    .input(z.void())
    .output(Me)
    .query(({ ctx }) => {
      if (!ctx.actor) throw new TRPCError({ code: "UNAUTHORIZED", message: "Not signed in." });
      const a = ctx.actor;
      return {
        id: a.userId,
        email: a.email,
        name: a.name,
        role: a.role,
        scopes: [...a.scopes],
        via: a.kind === "token" ? "token" : "session",
      };
    }),
  changePassword: readProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/me/password",
        tags: ["auth"],
        summary: "Change your own password (needs the current one); ends your other sessions",
      },
    })
    .input(ChangePasswordInput)
    .output(ChangePasswordResult)
    .mutation(({ ctx, input }) => changeOwnPassword(ctx.db, ctx.actor, input)),
});

export const fleetRouter = router({
  overview: readProcedure
    .meta({
      openapi: { method: "GET", path: "/fleet", tags: ["fleet"], summary: "Pools and directors at a glance" },
    })
    .input(z.void())
    .output(z.object({ pools: z.array(PoolSummary), directors: z.array(Director) }))
    .query(({ ctx }) => fleetOverview(ctx.db)),
  live: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/fleet/live",
        tags: ["fleet"],
        summary:
          "Per pool new connections/s, established connections and open findings; the fleet's open findings",
      },
    })
    .input(z.void())
    .output(FleetLive)
    .query(({ ctx }) => fleetLive(ctx.db)),
});

// Pools and directors have their own routers; re-exported here for _app.ts.
export { poolsRouter } from "./pools.router";
export { directorsRouter } from "./directors.router";

export const proxiesListProcedure = readProcedure
  .meta({
    openapi: {
      method: "GET",
      path: "/proxies",
      tags: ["proxies"],
      summary: "List proxies, optionally of one pool",
    },
  })
  .input(z.object({ poolId: PoolId.optional() }))
  .output(z.array(Proxy))
  .query(({ ctx, input }) => listProxies(ctx.db, input.poolId));
