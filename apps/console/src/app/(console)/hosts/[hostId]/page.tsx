import type { Metadata } from "next";
import { Suspense } from "react";
import { getQueryClient, HydrateClient, trpc } from "~/trpc/server";
import { historyChoiceOf, historyInput } from "./history-range";
import { HostView } from "./host-view";

export const metadata: Metadata = { title: "Host" };

export default async function HostPage({
  params,
  searchParams,
}: {
  params: Promise<{ hostId: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { hostId } = await params;
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(await searchParams)) if (typeof v === "string") query.set(k, v);
  const choice = historyChoiceOf(query);
  const queryClient = getQueryClient();
  // A range of the history is fetched with the page, so its charts come in the first HTML rather
  // than after hydration and a second round trip (issue 16: first chart < 1 s for 24 h).
  await Promise.all([
    queryClient.prefetchQuery(trpc.hosts.get.queryOptions({ hostId })),
    choice.mode === "live"
      ? null
      : queryClient.prefetchQuery(trpc.hosts.history.queryOptions(historyInput(hostId, choice))),
  ]);
  return (
    <HydrateClient>
      {/* HostView reads the time range from the URL (useSearchParams). */}
      <Suspense fallback={<p className="muted">Loading host…</p>}>
        <HostView hostId={hostId} />
      </Suspense>
    </HydrateClient>
  );
}
