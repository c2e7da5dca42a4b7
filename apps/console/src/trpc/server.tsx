import "server-only";

import { appRouter, createCallerFactory, createContext } from "@tide/api";
import { dehydrate, HydrationBoundary } from "@tanstack/react-query";
import { createTRPCOptionsProxy } from "@trpc/tanstack-react-query";
import { headers } from "next/headers";
import { cache, type ReactNode } from "react";
import { makeQueryClient } from "./query-client";

/** Server components call the router in-process (no HTTP), with the request's cookie. */
const createRequestContext = cache(async () => createContext({ headers: new Headers(await headers()) }));

export const getQueryClient = cache(makeQueryClient);

export const trpc = createTRPCOptionsProxy({
  ctx: createRequestContext,
  router: appRouter,
  queryClient: getQueryClient,
});

const createCaller = createCallerFactory(appRouter);

/** A direct caller, for server code that needs a value rather than a prefetched query. */
export async function serverCaller() {
  return createCaller(await createRequestContext());
}

/**
 * Hand the queries prefetched during this request to the client components below. Prefetch failures
 * are not thrown (prefetchQuery swallows them): the client component fetches again and shows the error.
 */
export function HydrateClient({ children }: { children: ReactNode }) {
  return <HydrationBoundary state={dehydrate(getQueryClient())}>{children}</HydrationBoundary>;
}
