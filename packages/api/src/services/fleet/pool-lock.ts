import { TideError } from "@tide/contracts";
import type { Prisma } from "@tide/db";

/**
 * Interactive transactions that change a pool wait for its row lock. The lock is held only while
 * the table is rebuilt (milliseconds with a cached rendezvous order), so 5 s of waiting means
 * something is wrong and the caller should get an error rather than hang.
 */
export const TRANSACTION_OPTIONS = { maxWait: 5_000, timeout: 15_000 } as const;

/** Take the pool's row lock (SELECT … FOR UPDATE) for the rest of the transaction. */
export async function lockPool(tx: Prisma.TransactionClient, poolId: string): Promise<void> {
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM pools WHERE id = ${poolId} FOR UPDATE`;
  if (rows.length === 0) throw new TideError("not_found", `Pool ${poolId} does not exist.`);
}
