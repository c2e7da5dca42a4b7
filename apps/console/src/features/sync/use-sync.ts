"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "~/trpc/react";

/**
 * How often sync status is re-read while a page shows it, ms. Agents report every second and a
 * change reaches the directors in about that: one read a second makes "served by 2/2" follow it.
 */
export const SYNC_REFRESH_MS = 1_000;

/** Whether a pool's current version has reached every director assigned to it. */
export function usePoolSync(poolId: string) {
  const trpc = useTRPC();
  return useQuery({ ...trpc.sync.pool.queryOptions({ poolId }), refetchInterval: SYNC_REFRESH_MS });
}

/** Every director's sync status and the fleet-level alarm counts. */
export function useFleetSync(refreshMs = SYNC_REFRESH_MS) {
  const trpc = useTRPC();
  return useQuery({ ...trpc.sync.fleet.queryOptions(), refetchInterval: refreshMs });
}
