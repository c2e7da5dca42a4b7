import {
  ChangeReport,
  ExplainInput,
  FlowExplanation,
  Paged,
  PoolId,
  TableDiffResult,
  TableRows,
  TableVersionDetail,
  TableVersionId,
  TableVersionSummary,
} from "@tide/contracts";
import { z } from "zod";
import {
  currentVersionSummary,
  diffVersions,
  explainInVersion,
  getVersion,
  getVersionRows,
  listVersions,
} from "../services/tables/table.service";
import { getChangeReport, listChangeReports } from "../services/transitions/change-report.service";
import { readProcedure, router } from "../trpc";

export const tablesRouter = router({
  versions: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/pools/{poolId}/tables",
        tags: ["tables"],
        summary: "Table versions of a pool, newest first",
      },
    })
    .input(
      z.object({
        poolId: PoolId,
        limit: z.coerce.number().int().min(1).max(200).default(50),
        cursor: z.string().optional(),
      }),
    )
    .output(Paged(TableVersionSummary))
    .query(({ ctx, input }) => listVersions(ctx.db, input)),
  current: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/pools/{poolId}/tables/current",
        tags: ["tables"],
        summary: "The version directors should serve now",
      },
    })
    .input(z.object({ poolId: PoolId }))
    .output(TableVersionSummary)
    .query(({ ctx, input }) => currentVersionSummary(ctx.db, input.poolId)),
  version: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/tables/{versionId}",
        tags: ["tables"],
        summary: "One table version with its backends",
      },
    })
    .input(z.object({ versionId: TableVersionId }))
    .output(TableVersionDetail)
    .query(({ ctx, input }) => getVersion(ctx.db, input.versionId)),
  report: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/tables/{versionId}/report",
        tags: ["tables"],
        summary: "What the change to this version did to the pool's connections (its change report)",
      },
    })
    .input(z.object({ versionId: TableVersionId }))
    .output(ChangeReport)
    .query(({ ctx, input }) => getChangeReport(ctx.db, input.versionId)),
  reports: readProcedure
    .input(z.object({ versionIds: z.array(TableVersionId).max(200) }))
    .output(z.array(ChangeReport))
    .query(({ ctx, input }) => listChangeReports(ctx.db, input.versionIds)),
  rows: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/tables/{versionId}/rows",
        tags: ["tables"],
        summary: "All 65,536 rows (slot per row, base64)",
      },
    })
    .input(z.object({ versionId: TableVersionId }))
    .output(TableRows)
    .query(({ ctx, input }) => getVersionRows(ctx.db, input.versionId)),
  diff: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/tables/{fromVersionId}/diff/{toVersionId}",
        tags: ["tables"],
        summary: "Diff two versions of a pool's table",
      },
    })
    .input(z.object({ fromVersionId: TableVersionId, toVersionId: TableVersionId }))
    .output(TableDiffResult)
    .query(({ ctx, input }) => diffVersions(ctx.db, input.fromVersionId, input.toVersionId)),
  explain: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/tables/{versionId}/explain",
        tags: ["tables"],
        summary: "Explain a flow: row, primary, secondary, outer source port",
      },
    })
    .input(ExplainInput)
    .output(FlowExplanation)
    .query(({ ctx, input }) => explainInVersion(ctx.db, input)),
});
