import type { Metadata } from "next";
import { filtersFromSearch, queryFromFilters } from "~/features/audit/audit-filters";
import { AUDIT_PAGE } from "~/features/audit/audit-page-size";
import { AuditView } from "~/features/audit/audit-view";
import { getQueryClient, HydrateClient, trpc } from "~/trpc/server";

export const metadata: Metadata = { title: "Audit log" };

export default async function AuditPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { filters, dropped } = filtersFromSearch(await searchParams);
  const queryClient = getQueryClient();
  await Promise.all([
    queryClient.prefetchQuery(trpc.pools.list.queryOptions()),
    queryClient.prefetchQuery(trpc.audit.facets.queryOptions()),
    queryClient.prefetchInfiniteQuery(
      trpc.audit.list.infiniteQueryOptions(
        { ...queryFromFilters(filters), limit: AUDIT_PAGE },
        { getNextPageParam: (last) => last.nextCursor ?? undefined },
      ),
    ),
  ]);
  return (
    <HydrateClient>
      <AuditView filters={filters} dropped={dropped} />
    </HydrateClient>
  );
}
