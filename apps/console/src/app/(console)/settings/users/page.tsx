import type { Metadata } from "next";
import { requireUser } from "~/features/auth/current-user";
import { UsersView } from "~/features/users/users-view";
import { getQueryClient, HydrateClient, trpc } from "~/trpc/server";

export const metadata: Metadata = { title: "Users" };

export default async function UsersPage() {
  const me = await requireUser();
  if (me.scopes.includes("admin")) await getQueryClient().prefetchQuery(trpc.users.list.queryOptions());
  return (
    <HydrateClient>
      <UsersView />
    </HydrateClient>
  );
}
