"use client";

import type { ChangeReport } from "@tide/contracts";
import { useQueries } from "@tanstack/react-query";
import { useTRPC } from "~/trpc/react";

/** While a shown report is not written yet, it is re-read this often, ms (its window lasts 20 s to 2 min). */
export const REPORT_REFRESH_MS = 3_000;

/**
 * The change reports of lists of versions, one `tables.reports` query per list page (the caller's
 * pages, each at most 200 ids): a page whose reports are all done is read once; one with a report
 * still measuring or closing is re-read every REPORT_REFRESH_MS until they are. `byId` maps a
 * version id to its report, or null once its page was read without one (a version from before
 * reports); an id whose page is still loading is absent.
 */
export function useChangeReports(pages: readonly (readonly string[])[]): {
  byId: ReadonlyMap<string, ChangeReport | null>;
} {
  const trpc = useTRPC();
  return useQueries({
    queries: pages
      .filter((ids) => ids.length > 0)
      .map((ids) => ({
        ...trpc.tables.reports.queryOptions({ versionIds: [...ids] }),
        refetchInterval: (q: { state: { data?: ChangeReport[] } }) =>
          q.state.data?.some((r) => r.status !== "done") ? REPORT_REFRESH_MS : false,
      })),
    combine: (results) => {
      const byId = new Map<string, ChangeReport | null>();
      const pageIds = pages.filter((ids) => ids.length > 0);
      results.forEach((res, i) => {
        if (!res.data) return;
        for (const id of pageIds[i] ?? []) byId.set(id, null);
        for (const r of res.data) byId.set(r.tableVersionId, r);
      });
      return { byId };
    },
  });
}
