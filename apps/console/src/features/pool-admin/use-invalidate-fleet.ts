"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import { useTRPC } from "~/trpc/react";

/**
 * After a fleet change (pool, bind, proxy, director): refetch every view of the fleet, since one
 * change shows on the fleet page, the pool page, the directors page and the table pages.
 */
export function useInvalidateFleet(): () => Promise<void> {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return useCallback(async () => {
    await Promise.all(
      [trpc.fleet, trpc.pools, trpc.proxies, trpc.directors, trpc.tables].map((r) =>
        queryClient.invalidateQueries(r.pathFilter()),
      ),
    );
  }, [trpc, queryClient]);
}
