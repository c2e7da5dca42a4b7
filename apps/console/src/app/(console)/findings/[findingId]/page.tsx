import { historyRetentionDays } from "@tide/api";
import type { Metadata } from "next";
import { getQueryClient, HydrateClient, trpc } from "~/trpc/server";
import { FindingView } from "./finding-view";

export const metadata: Metadata = { title: "Finding" };

export default async function FindingPage({ params }: { params: Promise<{ findingId: string }> }) {
  const { findingId } = await params;
  await getQueryClient().prefetchQuery(trpc.findings.get.queryOptions({ findingId }));
  return (
    <HydrateClient>
      <FindingView findingId={findingId} historyDays={historyRetentionDays()} />
    </HydrateClient>
  );
}
