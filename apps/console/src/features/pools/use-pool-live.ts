"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { openLiveSource } from "~/features/live/live-source";
import { useTRPC } from "~/trpc/react";

export type PoolLiveState = "connecting" | "live" | "offline";

/**
 * The pool page's push channel (/api/live/pools/{id}): on each `changed` the pool, its health and
 * its sync status are re-read at once, so a proxy turning unhealthy or a drain's new version shows
 * without waiting for a poll. It reconnects (EventSource itself, or openLiveSource when the browser
 * gives up); a reconnect re-reads too.
 */
export function usePoolLive(poolId: string): PoolLiveState {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [state, setState] = useState<PoolLiveState>("connecting");
  useEffect(() => {
    const reread = () =>
      void Promise.all([
        queryClient.invalidateQueries({ queryKey: trpc.pools.get.queryKey({ poolId }) }),
        queryClient.invalidateQueries({ queryKey: trpc.pools.health.queryKey({ poolId }) }),
        queryClient.invalidateQueries({ queryKey: trpc.sync.pool.queryKey({ poolId }) }),
        queryClient.invalidateQueries({ queryKey: trpc.pools.traffic.queryKey({ poolId }) }),
      ]);
    return openLiveSource(`/api/live/pools/${encodeURIComponent(poolId)}`, {
      onError: () => setState("offline"),
      events: {
        hello: () => {
          setState("live");
          reread();
        },
        changed: () => {
          setState("live");
          reread();
        },
        traffic: () => {
          setState("live");
          void queryClient.invalidateQueries({ queryKey: trpc.pools.traffic.queryKey({ poolId }) });
        },
      },
    });
  }, [poolId, queryClient, trpc]);
  return state;
}
