import { HealthChange, jsonBoolean, Proxy, safeText, SetHealthPinInput } from "@tide/contracts";
import {
  ProxyAction,
  ProxyIdInput,
  PoolId,
  ProxyCreated,
  ProxyId,
  ProxyRemoved,
  TransitionPreview,
  TransitionResult,
} from "@tide/contracts";
import { z } from "zod";
import { createProxy, removeProxy, setProxyHealth } from "../services/transitions/proxy-lifecycle.service";
import { setHealthPin } from "../services/health/proxy-health.service";
import { previewTransition, transitionProxy } from "../services/transitions/proxy-transition.service";
import { adminProcedure, operateProcedure, readProcedure, router } from "../trpc";
import { proxiesListProcedure } from "./fleet.router";

const Reason = safeText().max(500).optional().describe("Why (kept in the audit log and the table version)");
const ExpectedVersion = z
  .number()
  .int()
  .min(1)
  .nullable()
  .optional()
  .describe(
    "Refuse (conflict) unless the pool's current table version is this one (null: none yet): " +
      "pass the preview's basedOnVersion so a change made since the preview is not applied blind",
  );

const actionSummaries: Record<ProxyAction, string> = {
  drain: "Drain a proxy (active -> draining): new flows go to the others, established ones still reach it",
  deactivate:
    "Deactivate a draining proxy (draining -> inactive): out of the table, connections left are cut",
  fill: "Fill an inactive proxy (inactive -> filling): it takes new flows, the old owner stays second",
  activate: "Activate a filling proxy (filling -> active)",
  abort:
    "Abort the change in progress: a draining proxy goes back to active, a filling one to inactive " +
    "(activate on a draining proxy and deactivate on a filling one still work and are recorded as abort)",
};

/** One REST endpoint per action (runbooks say what they do); all share the transition service. */
function actionProcedure(action: ProxyAction) {
  return operateProcedure
    .meta({
      openapi: {
        method: "POST",
        path: `/proxies/{proxyId}/${action}`,
        tags: ["proxies"],
        summary: actionSummaries[action],
      },
    })
    .input(z.object({ proxyId: ProxyId, reason: Reason, expectedVersion: ExpectedVersion }))
    .output(TransitionResult)
    .mutation(({ ctx, input }) => transitionProxy(ctx.db, ctx.actor, { ...input, action }));
}

export const proxiesRouter = router({
  list: proxiesListProcedure,
  preview: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/proxies/{proxyId}/preview",
        tags: ["proxies"],
        summary: "Preview an action: allowed or why not, and the table diff it would make",
      },
    })
    .input(z.object({ proxyId: ProxyId, action: ProxyAction }))
    .output(TransitionPreview)
    .query(({ ctx, input }) => previewTransition(ctx.db, input)),
  transition: operateProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/proxies/{proxyId}/transition",
        tags: ["proxies"],
        summary: "Apply an action to a proxy",
      },
    })
    .input(
      z.object({ proxyId: ProxyId, action: ProxyAction, reason: Reason, expectedVersion: ExpectedVersion }),
    )
    .output(TransitionResult)
    .mutation(({ ctx, input }) => transitionProxy(ctx.db, ctx.actor, input)),
  drain: actionProcedure("drain"),
  deactivate: actionProcedure("deactivate"),
  fill: actionProcedure("fill"),
  activate: actionProcedure("activate"),
  abort: actionProcedure("abort"),
  setHealth: operateProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/proxies/{proxyId}/health",
        tags: ["proxies"],
        summary: "Record a health change (soft drain when down)",
      },
    })
    .input(z.object({ proxyId: ProxyId, healthy: jsonBoolean(), reason: safeText().min(1).max(500) }))
    .output(TransitionResult)
    .mutation(({ ctx, input }) => setProxyHealth(ctx.db, ctx.actor, input)),
  setHealthPin: operateProcedure
    .meta({
      openapi: {
        method: "PUT",
        path: "/proxies/{proxyId}/health-pin",
        tags: ["proxies"],
        summary: "Pin a proxy's health (true/false) whatever the directors' checks say, or unpin it (null)",
      },
    })
    .input(SetHealthPinInput)
    .output(z.object({ proxy: Proxy, changed: z.array(HealthChange) }))
    .mutation(({ ctx, input }) => setHealthPin(ctx.db, ctx.actor, input)),
  create: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/pools/{poolId}/proxies",
        tags: ["proxies"],
        summary: "Add a proxy (joins inactive; active while the pool carries no traffic)",
      },
    })
    .input(
      z.object({
        poolId: PoolId,
        address: z.string().describe("IPv4 address, the outer GUE destination"),
        hostname: z.string().describe("Host name of the proxy"),
      }),
    )
    .output(ProxyCreated)
    .mutation(({ ctx, input }) => createProxy(ctx.db, ctx.actor, input)),
  remove: adminProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/proxies/{proxyId}",
        tags: ["proxies"],
        summary: "Remove an inactive proxy (writes a table version without it)",
      },
    })
    .input(ProxyIdInput.extend({ reason: Reason }))
    .output(ProxyRemoved)
    .mutation(({ ctx, input }) => removeProxy(ctx.db, ctx.actor, input)),
});
