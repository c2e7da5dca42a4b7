import type { Metadata } from "next";
import { FleetOverview } from "~/features/fleet/fleet-overview";
import { getQueryClient, HydrateClient, trpc } from "~/trpc/server";

export const metadata: Metadata = { title: "Fleet" };

export default async function FleetPage() {
  await getQueryClient().prefetchQuery(trpc.fleet.overview.queryOptions());
  return (
    <HydrateClient>
      <FleetOverview />
    </HydrateClient>
  );
}
