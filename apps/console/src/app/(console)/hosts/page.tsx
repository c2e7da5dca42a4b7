import type { Metadata } from "next";
import { getQueryClient, HydrateClient, trpc } from "~/trpc/server";
import { HostList } from "./host-list";

export const metadata: Metadata = { title: "Hosts" };

export default async function HostsPage() {
  await getQueryClient().prefetchQuery(trpc.hosts.list.queryOptions());
  return (
    <HydrateClient>
      <HostList />
    </HydrateClient>
  );
}
