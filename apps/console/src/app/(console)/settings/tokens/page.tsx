import type { Metadata } from "next";
import { requireUser } from "~/features/auth/current-user";
import { TokensView } from "~/features/tokens/tokens-view";
import { getQueryClient, HydrateClient, trpc } from "~/trpc/server";

export const metadata: Metadata = { title: "Tokens" };

export default async function TokensPage() {
  const me = await requireUser();
  if (me.scopes.includes("admin")) await getQueryClient().prefetchQuery(trpc.tokens.list.queryOptions());
  return (
    <HydrateClient>
      <TokensView />
    </HydrateClient>
  );
}
