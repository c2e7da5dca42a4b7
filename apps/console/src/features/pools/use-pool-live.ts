"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { openLiveSource } from "~/features/live/live-source";
import { useTRPC } from "~/trpc/react";

export type PoolLiveState = "connecting" | "live" | "offline";

/**
 * With no `traffic` event for this long, ms, the traffic is re-read anyway: a proxy whose agent
 * went silent sends no event, and only a new reading tells the page its figures are now late
 * (the API decides lateness at read time). Three sample intervals: an agent a second behind stays
 * quiet, a silent one shows "late" within ~5 s.
 */
export const TRAFFIC_REREAD_MS = 3_000;

/**
 * The pool page's push channel (/api/live/pools/{id}): on each `changed` the pool, its health and
 * its sync status are re-read at once, so a proxy turning unhealthy or a drain's new version shows
 * without waiting for a poll. It reconnects (EventSource itself, or openLiveSource when the browser
 * gives up); a reconnect re-reads too. Traffic is also re-read after TRAFFIC_REREAD_MS without an
 * event, so a proxy that stopped reporting turns "late" instead of keeping its last figures.
 */
export function usePoolLive(poolId: string): PoolLiveState {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [state, setState] = useState<PoolLiveState>("connecting");
  useEffect(() => {
    let trafficAt = Date.now();
    const rereadTraffic = () => {
      trafficAt = Date.now();
      void queryClient.invalidateQueries({ queryKey: trpc.pools.traffic.queryKey({ poolId }) });
    };
    const quiet = setInterval(() => {
      if (Date.now() - trafficAt >= TRAFFIC_REREAD_MS) rereadTraffic();
    }, TRAFFIC_REREAD_MS / 3);
    const reread = () =>
      void Promise.all([
        queryClient.invalidateQueries({ queryKey: trpc.pools.get.queryKey({ poolId }) }),
        queryClient.invalidateQueries({ queryKey: trpc.pools.health.queryKey({ poolId }) }),
        queryClient.invalidateQueries({ queryKey: trpc.sync.pool.queryKey({ poolId }) }),
        queryClient.invalidateQueries({ queryKey: trpc.pools.traffic.queryKey({ poolId }) }),
      ]);
    const close = openLiveSource(`/api/live/pools/${encodeURIComponent(poolId)}`, {
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
          rereadTraffic();
        },
      },
    });
    return () => {
      clearInterval(quiet);
      close();
    };
  }, [poolId, queryClient, trpc]);
  return state;
}
