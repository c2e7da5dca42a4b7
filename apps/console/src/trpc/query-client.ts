import { defaultShouldDehydrateQuery, QueryCache, QueryClient } from "@tanstack/react-query";

/** The HTTP status of a failed tRPC call, if it has one. */
function httpStatusOf(error: unknown): number | null {
  const status = (error as { data?: { httpStatus?: unknown } } | null)?.data?.httpStatus;
  return typeof status === "number" ? status : null;
}

/**
 * Retry a failed read once, but never an answer the server gave on purpose (4xx: not found, no
 * scope, bad input): an unknown id says "not found" at once instead of after retries.
 */
export function shouldRetry(failureCount: number, error: unknown): boolean {
  const status = httpStatusOf(error);
  if (status !== null && status >= 400 && status < 500) return false;
  return failureCount < 1;
}

/**
 * One QueryClient per request on the server and one per tab in the browser. Data is fresh for 15 s,
 * so pages prefetched on the server are not fetched again right after hydration.
 */
export function makeQueryClient(opts: { onQueryError?: (error: unknown) => void } = {}): QueryClient {
  return new QueryClient({
    queryCache: new QueryCache({ onError: (error) => opts.onQueryError?.(error) }),
    defaultOptions: {
      queries: { staleTime: 15_000, retry: shouldRetry },
      dehydrate: {
        shouldDehydrateQuery: (query) =>
          defaultShouldDehydrateQuery(query) || query.state.status === "pending",
      },
    },
  });
}
