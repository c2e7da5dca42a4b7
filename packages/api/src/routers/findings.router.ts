import { z } from "zod";
import {
  AcknowledgeInput,
  FindingDetail,
  FindingIdInput,
  FindingListInput,
  FindingRecord,
} from "../schemas/findings.schema";
import { acknowledgeFinding, getFinding, listFindings } from "../services/findings/finding.service";
import { operateProcedure, readProcedure, router } from "../trpc";

export const findingsRouter = router({
  list: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/findings",
        tags: ["findings"],
        summary: "Findings, worst first (filter by status, host, kind, severity)",
      },
    })
    .input(FindingListInput)
    .output(z.array(FindingRecord))
    .query(({ ctx, input }) => listFindings(ctx.db, input)),
  get: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/findings/{findingId}",
        tags: ["findings"],
        summary: "A finding with history",
      },
    })
    .input(FindingIdInput)
    .output(FindingDetail)
    .query(({ ctx, input }) => getFinding(ctx.db, input.findingId)),
  acknowledge: operateProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/findings/{findingId}/acknowledge",
        tags: ["findings"],
        summary: "Acknowledge an open finding (operate scope; audited)",
      },
    })
    .input(AcknowledgeInput)
    .output(FindingDetail)
    .mutation(({ ctx, input }) => acknowledgeFinding(ctx.db, ctx.actor, input)),
});
