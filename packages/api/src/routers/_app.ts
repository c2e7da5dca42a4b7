import { router } from "../trpc";
import { agentRouter } from "./agent.router";
import { auditRouter } from "./audit.router";
import { enrollmentTokensRouter, enrollRouter } from "./enrollment.router";
import { findingsRouter } from "./findings.router";
import { hostsRouter, hostTokensRouter, observationsRouter } from "./hosts.router";
import { authRouter, directorsRouter, fleetRouter, poolsRouter } from "./fleet.router";
import { proxiesRouter } from "./proxies.router";
import { syncRouter } from "./sync.router";
import { tablesRouter } from "./tables.router";
import { tokensRouter } from "./tokens.router";
import { usersRouter } from "./users.router";

export const appRouter = router({
  auth: authRouter,
  fleet: fleetRouter,
  pools: poolsRouter,
  directors: directorsRouter,
  proxies: proxiesRouter,
  tables: tablesRouter,
  audit: auditRouter,
  tokens: tokensRouter,
  users: usersRouter,
  agent: agentRouter,
  hosts: hostsRouter,
  hostTokens: hostTokensRouter,
  enrollmentTokens: enrollmentTokensRouter,
  enroll: enrollRouter,
  observations: observationsRouter,
  findings: findingsRouter,
  sync: syncRouter,
});

export type AppRouter = typeof appRouter;
