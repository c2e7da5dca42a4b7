"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useTRPC } from "~/trpc/react";

export type PoolLiveState = "connecting" | "live" | "offline";

/**
 * The pool page's push channel (/api/live/pools/{id}): on each `changed` the pool, its health and
 * its sync status are re-read at once, so a proxy turning unhealthy or a drain's new version shows
 * without waiting for a poll. EventSource reconnects by itself; a reconnect re-reads too.
 */
export function usePoolLive(poolId: string): PoolLiveState {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [state, setState] = useState<PoolLiveState>("connecting");
  useEffect(() => {
    const source = new EventSource(`/api/live/pools/${encodeURIComponent(poolId)}`);
    const reread = () =>
      void Promise.all([
        queryClient.invalidateQueries({ queryKey: trpc.pools.get.queryKey({ poolId }) }),
        queryClient.invalidateQueries({ queryKey: trpc.pools.health.queryKey({ poolId }) }),
        queryClient.invalidateQueries({ queryKey: trpc.sync.pool.queryKey({ poolId }) }),
        queryClient.invalidateQueries({ queryKey: trpc.pools.traffic.queryKey({ poolId }) }),
      ]);
    source.addEventListener("hello", () => {
      setState("live");
      reread();
    });
    source.addEventListener("error", () => setState("offline"));
    source.addEventListener("changed", () => {
      setState("live");
      reread();
    });
    source.addEventListener("traffic", () => {
      setState("live");
      void queryClient.invalidateQueries({ queryKey: trpc.pools.traffic.queryKey({ poolId }) });
    });
    return () => source.close();
  }, [poolId, queryClient, trpc]);
  return state;
}
