import type { Metadata } from "next";
import { ForwardingTableView } from "~/features/table/forwarding-table-view";
import { tableStateFromSearch } from "~/features/table/table-url";
import { getQueryClient, HydrateClient, trpc } from "~/trpc/server";

export const metadata: Metadata = { title: "Forwarding table" };

function parseVersion(v: string | string[] | undefined): number | null {
  const n = typeof v === "string" ? Number(v) : NaN;
  return Number.isInteger(n) && n > 0 ? n : null;
}

/**
 * Prefetches the pool, its versions and the chosen version's rows on the server, so the first
 * screen of rows is in the HTML (no client round trip before rows show). The selected row, the
 * proxy filter and the explained flow come from the URL too (?row=0xbb44&proxy=…&src=…).
 */
export default async function TablePage({
  params,
  searchParams,
}: {
  params: Promise<{ poolId: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { poolId } = await params;
  const search = await searchParams;
  const version = parseVersion(search.version);
  const queryClient = getQueryClient();
  const [, versions] = await Promise.all([
    queryClient.prefetchQuery(trpc.pools.get.queryOptions({ poolId })),
    queryClient.fetchQuery(trpc.tables.versions.queryOptions({ poolId, limit: 200 })).catch(() => null),
  ]);
  const chosen = versions?.items.find((v) => version === null || v.version === version);
  if (chosen) await queryClient.prefetchQuery(trpc.tables.rows.queryOptions({ versionId: chosen.id }));
  return (
    <HydrateClient>
      <ForwardingTableView poolId={poolId} version={version} initial={tableStateFromSearch(search)} />
    </HydrateClient>
  );
}
