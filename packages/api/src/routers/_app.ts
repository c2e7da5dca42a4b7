import { router } from "../trpc";
import { auditRouter } from "./audit.router";
import { authRouter, directorsRouter, fleetRouter, poolsRouter } from "./fleet.router";
import { proxiesRouter } from "./proxies.router";
import { tablesRouter } from "./tables.router";
import { tokensRouter } from "./tokens.router";

export const appRouter = router({
  auth: authRouter,
  fleet: fleetRouter,
  pools: poolsRouter,
  directors: directorsRouter,
  proxies: proxiesRouter,
  tables: tablesRouter,
  audit: auditRouter,
  tokens: tokensRouter,
});

export type AppRouter = typeof appRouter;
