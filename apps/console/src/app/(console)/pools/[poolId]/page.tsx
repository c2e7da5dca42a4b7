import type { Metadata } from "next";
import { PoolView } from "~/features/pools/pool-view";
import { getQueryClient, HydrateClient, trpc } from "~/trpc/server";

export const metadata: Metadata = { title: "Pool" };

export default async function PoolPage({ params }: { params: Promise<{ poolId: string }> }) {
  const { poolId } = await params;
  await getQueryClient().prefetchQuery(trpc.pools.get.queryOptions({ poolId }));
  return (
    <HydrateClient>
      <PoolView poolId={poolId} />
    </HydrateClient>
  );
}
