import { z } from "zod";
import { DirectorId, PoolId } from "./ids";

/**
 * Whether the directors serve what the console wants (ARCHITECTURE.md, flow 3: desired state,
 * reconciled). Each director's agent reports the content hash it serves per pool with every batch;
 * the console compares it with the pool's current table version.
 */

/** A director whose agent has not reported for this long is "silent" (agents report every second). */
export const DIRECTOR_SILENT_AFTER_MS = 5_000;

const Iso = z.string().datetime();

export const SyncVersionRef = z
  .object({
    version: z.int().nullable().describe("Table version number, or null when no version has this hash"),
    contentHash: z.string().describe("sha256 (hex) of the pool's table file"),
  })
  .describe("A table as identified by its content hash");

export const DirectorPoolSyncState = z
  .enum(["in_sync", "behind", "not_served", "silent", "no_table"])
  .describe(
    "in_sync: serves the current version; behind: serves an older (or unknown) table; not_served: serves " +
      "nothing for the pool; silent: its agent stopped reporting, so nobody knows; no_table: the pool has " +
      "no version yet (no usable proxy), nothing to serve",
  );
export type DirectorPoolSyncState = z.infer<typeof DirectorPoolSyncState>;

export const DirectorPoolSync = z
  .object({
    poolId: PoolId,
    poolName: z.string().describe("Pool name (what the director calls the table)"),
    state: DirectorPoolSyncState,
    desired: SyncVersionRef.nullable().describe("The pool's current version, or null if it has none"),
    served: SyncVersionRef.nullable().describe("What the director last reported serving, or null"),
    since: Iso.nullable().describe("Since when it has been out of sync (null while in sync)"),
  })
  .describe("One pool on one director: wanted and served");
export type DirectorPoolSync = z.infer<typeof DirectorPoolSync>;

export const DirectorSyncState = z
  .enum(["in_sync", "out_of_sync", "silent", "no_agent", "idle"])
  .describe(
    "in_sync: every pool served at its current version; out_of_sync: at least one pool is not; silent: " +
      "its agent stopped reporting; no_agent: no agent with this host name ever reported; idle: no pools",
  );
export type DirectorSyncState = z.infer<typeof DirectorSyncState>;

export const DirectorSync = z
  .object({
    directorId: DirectorId,
    hostname: z.string().describe("Director host name (= its agent's host name)"),
    state: DirectorSyncState,
    since: Iso.nullable().describe("Since when it has been out of sync or silent (null when in sync)"),
    lastCheckIn: Iso.nullable().describe("Last report from its agent (console clock)"),
    reachable: z
      .boolean()
      .nullable()
      .describe("Whether the agent reached tide-director's control socket (null: no report)"),
    error: z.string().nullable().describe("Why the director is unreachable, from the agent"),
    pools: z.array(DirectorPoolSync).describe("Assigned pools, by name"),
    extraPools: z
      .array(z.string())
      .describe(
        "Pools it serves that are not assigned to it (kept serving until an assigned set replaces them)",
      ),
  })
  .describe("A director's sync status");
export type DirectorSync = z.infer<typeof DirectorSync>;

export const FleetSync = z
  .object({
    directors: z.array(DirectorSync),
    outOfSync: z.int().describe("Directors out of sync"),
    silent: z.int().describe("Directors whose agents are silent or never reported"),
    checkedAt: Iso.describe("When the console computed this (console clock)"),
  })
  .describe("Every director's sync status, with the fleet-level alarm counts");
export type FleetSync = z.infer<typeof FleetSync>;

export const PoolSync = z
  .object({
    poolId: PoolId,
    version: z.int().nullable().describe("The pool's current table version, or null"),
    servedBy: z.int().describe("Directors serving the current version"),
    directorCount: z.int().describe("Directors the pool is assigned to"),
    done: z.boolean().describe("Every assigned director serves the current version"),
    directors: z
      .array(
        DirectorPoolSync.omit({ poolId: true, poolName: true }).extend({
          directorId: DirectorId,
          hostname: z.string(),
        }),
      )
      .describe("Per director"),
  })
  .describe("Whether a pool's current version has reached every director that serves it");
export type PoolSync = z.infer<typeof PoolSync>;
