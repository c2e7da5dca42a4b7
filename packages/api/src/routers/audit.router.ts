import { safeText } from "@tide/contracts";
import { AuditEntry, Paged, PoolId } from "@tide/contracts";
import { z } from "zod";
import { listAudit } from "../services/audit.service";
import { readProcedure, router } from "../trpc";

export const auditRouter = router({
  list: readProcedure
    .meta({ openapi: { method: "GET", path: "/audit", tags: ["audit"], summary: "Audit log, newest first" } })
    .input(
      z.object({
        poolId: PoolId.optional(),
        targetId: safeText().max(200).optional(),
        limit: z.coerce.number().int().min(1).max(200).default(50),
        cursor: safeText().max(200).optional(),
      }),
    )
    .output(Paged(AuditEntry))
    .query(({ ctx, input }) => listAudit(ctx.db, input)),
});
