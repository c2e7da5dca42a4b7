import { AuditEntry, AuditFacets, AuditListInput, Paged } from "@tide/contracts";
import { z } from "zod";
import { auditFacets, listAudit } from "../services/audit/audit.service";
import { readProcedure, router } from "../trpc";

export const auditRouter = router({
  list: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/audit",
        tags: ["audit"],
        summary: "Audit log, newest first (filter by pool, target, action, actor, outcome and time)",
      },
    })
    .input(AuditListInput)
    .output(Paged(AuditEntry))
    .query(({ ctx, input }) => listAudit(ctx.db, input)),
  facets: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/audit/facets",
        tags: ["audit"],
        summary: "Actions and actors in the log",
      },
    })
    .input(z.void())
    .output(AuditFacets)
    .query(({ ctx }) => auditFacets(ctx.db)),
});
