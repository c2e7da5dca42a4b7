import type { Metadata } from "next";
import { DirectorsView } from "~/features/directors/directors-view";
import { getQueryClient, HydrateClient, trpc } from "~/trpc/server";

export const metadata: Metadata = { title: "Directors" };

export default async function DirectorsPage() {
  await getQueryClient().prefetchQuery(trpc.fleet.overview.queryOptions());
  return (
    <HydrateClient>
      <DirectorsView />
    </HydrateClient>
  );
}
