import type { Metadata } from "next";
import { PoolSettingsView } from "~/features/pool-admin/pool-settings-view";
import { getQueryClient, HydrateClient, trpc } from "~/trpc/server";

export const metadata: Metadata = { title: "Pool settings" };

export default async function PoolSettingsPage({ params }: { params: Promise<{ poolId: string }> }) {
  const { poolId } = await params;
  await getQueryClient().prefetchQuery(trpc.pools.get.queryOptions({ poolId }));
  return (
    <HydrateClient>
      <PoolSettingsView poolId={poolId} />
    </HydrateClient>
  );
}
