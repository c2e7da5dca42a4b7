import type { Metadata } from "next";
import { Suspense } from "react";
import { getQueryClient, HydrateClient, trpc } from "~/trpc/server";
import { HostView } from "./host-view";

export const metadata: Metadata = { title: "Host" };

export default async function HostPage({ params }: { params: Promise<{ hostId: string }> }) {
  const { hostId } = await params;
  await getQueryClient().prefetchQuery(trpc.hosts.get.queryOptions({ hostId }));
  return (
    <HydrateClient>
      {/* HostView reads the time range from the URL (useSearchParams). */}
      <Suspense fallback={<p className="muted">Loading host…</p>}>
        <HostView hostId={hostId} />
      </Suspense>
    </HydrateClient>
  );
}
