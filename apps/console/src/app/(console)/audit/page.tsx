import type { Metadata } from "next";
import { AUDIT_PAGE } from "~/features/audit/audit-page-size";
import { AuditView } from "~/features/audit/audit-view";
import { getQueryClient, HydrateClient, trpc } from "~/trpc/server";

export const metadata: Metadata = { title: "Audit log" };

export default async function AuditPage({
  searchParams,
}: {
  searchParams: Promise<{ pool?: string | string[] }>;
}) {
  const { pool } = await searchParams;
  const poolId = typeof pool === "string" && pool !== "" ? pool : null;
  const queryClient = getQueryClient();
  await Promise.all([
    queryClient.prefetchQuery(trpc.pools.list.queryOptions()),
    queryClient.prefetchInfiniteQuery(
      trpc.audit.list.infiniteQueryOptions(
        { poolId: poolId ?? undefined, limit: AUDIT_PAGE },
        { getNextPageParam: (last) => last.nextCursor ?? undefined },
      ),
    ),
  ]);
  return (
    <HydrateClient>
      <AuditView poolId={poolId} />
    </HydrateClient>
  );
}
