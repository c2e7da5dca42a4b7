import { defaultShouldDehydrateQuery, QueryCache, QueryClient } from "@tanstack/react-query";

/**
 * One QueryClient per request on the server and one per tab in the browser. Data is fresh for 15 s,
 * so pages prefetched on the server are not fetched again right after hydration.
 */
export function makeQueryClient(opts: { onQueryError?: (error: unknown) => void } = {}): QueryClient {
  return new QueryClient({
    queryCache: new QueryCache({ onError: (error) => opts.onQueryError?.(error) }),
    defaultOptions: {
      queries: { staleTime: 15_000, retry: 1 },
      dehydrate: {
        shouldDehydrateQuery: (query) =>
          defaultShouldDehydrateQuery(query) || query.state.status === "pending",
      },
    },
  });
}
