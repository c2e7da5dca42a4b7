import type { Metadata } from "next";
import { getQueryClient, HydrateClient, trpc } from "~/trpc/server";
import { HostView } from "./host-view";

export const metadata: Metadata = { title: "Host" };

export default async function HostPage({ params }: { params: Promise<{ hostId: string }> }) {
  const { hostId } = await params;
  await getQueryClient().prefetchQuery(trpc.hosts.get.queryOptions({ hostId }));
  return (
    <HydrateClient>
      <HostView hostId={hostId} />
    </HydrateClient>
  );
}
