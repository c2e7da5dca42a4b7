import type { Db } from "@tide/db";
import { systemActorRef } from "../auth/actor";
import { lockPool, TRANSACTION_OPTIONS } from "../services/fleet/pool-lock";
import { currentTableOf, insertCurrentTableVersion } from "../services/tables/table.service";

/** The cause of versions written only to move a pool's table to the current file format. */
export const TABLE_FORMAT_CAUSE = "table.format";

/**
 * Converge existing databases on tables that carry their hash fields (GLBD v3): every pool whose
 * current version was written before (a v2 file, decoded without hashFields) gets one new version
 * of its state as it is, by the system. Rows are unchanged; only the file format and content hash
 * differ. Safe to run on every start: pools already on v3, or without a version, are left alone.
 */
export async function upgradeTableFormats(db: Db, label = "seed"): Promise<string[]> {
  const upgraded: string[] = [];
  const pools = await db.pool.findMany({ select: { id: true, name: true }, orderBy: { name: "asc" } });
  for (const pool of pools) {
    const current = await currentTableOf(db, pool.id);
    if (!current || current.table.hashFields !== undefined) continue;
    const written = await db.$transaction(async (tx) => {
      await lockPool(tx, pool.id);
      // Re-check under the lock: another process may have written a version meanwhile.
      const latest = await tx.tableVersion.findFirst({
        where: { poolId: pool.id },
        orderBy: { version: "desc" },
        select: { id: true },
      });
      if (latest?.id !== current.summary.id) return null;
      return insertCurrentTableVersion(tx, pool.id, TABLE_FORMAT_CAUSE, "", systemActorRef(label));
    }, TRANSACTION_OPTIONS);
    if (written) upgraded.push(pool.name);
  }
  return upgraded;
}
