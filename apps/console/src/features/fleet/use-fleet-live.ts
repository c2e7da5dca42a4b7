"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "~/trpc/react";

/** How often the fleet's live totals and open findings are re-read while shown, ms. */
export const FLEET_LIVE_REFRESH_MS = 5_000;

/** Per pool new connections/s, established connections and findings; the fleet's open findings. */
export function useFleetLive() {
  const trpc = useTRPC();
  return useQuery({ ...trpc.fleet.live.queryOptions(), refetchInterval: FLEET_LIVE_REFRESH_MS });
}
