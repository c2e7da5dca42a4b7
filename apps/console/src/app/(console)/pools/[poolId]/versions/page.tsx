import type { Metadata } from "next";
import { VERSIONS_PAGE } from "~/features/versions/versions-page-size";
import { VersionsView } from "~/features/versions/versions-view";
import { getQueryClient, HydrateClient, trpc } from "~/trpc/server";

export const metadata: Metadata = { title: "Table versions" };

function one(v: string | string[] | undefined): string | null {
  return typeof v === "string" && v !== "" ? v : null;
}

export default async function VersionsPage({
  params,
  searchParams,
}: {
  params: Promise<{ poolId: string }>;
  searchParams: Promise<{ from?: string | string[]; to?: string | string[] }>;
}) {
  const { poolId } = await params;
  const sp = await searchParams;
  const queryClient = getQueryClient();
  await Promise.all([
    queryClient.prefetchQuery(trpc.pools.get.queryOptions({ poolId })),
    queryClient.prefetchInfiniteQuery(
      trpc.tables.versions.infiniteQueryOptions(
        { poolId, limit: VERSIONS_PAGE },
        { getNextPageParam: (last) => last.nextCursor ?? undefined },
      ),
    ),
  ]);
  return (
    <HydrateClient>
      <VersionsView poolId={poolId} fromRef={one(sp.from)} toRef={one(sp.to)} />
    </HydrateClient>
  );
}
