import { Director, Me, PoolDetail, PoolIdInput, PoolSummary, Proxy, PoolId } from "@tide/contracts";
import { z } from "zod";
import { fleetOverview, getPool, listDirectors, listPools, listProxies } from "../services/fleet.service";
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
});

export const fleetRouter = router({
  overview: readProcedure
    .meta({
      openapi: { method: "GET", path: "/fleet", tags: ["fleet"], summary: "Pools and directors at a glance" },
    })
    .input(z.void())
    .output(z.object({ pools: z.array(PoolSummary), directors: z.array(Director) }))
    .query(({ ctx }) => fleetOverview(ctx.db)),
});

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
});

export const directorsRouter = router({
  list: readProcedure
    .meta({ openapi: { method: "GET", path: "/directors", tags: ["directors"], summary: "List directors" } })
    .input(z.void())
    .output(z.array(Director))
    .query(({ ctx }) => listDirectors(ctx.db)),
});

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
