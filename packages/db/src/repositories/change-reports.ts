import type { Prisma } from "@prisma/client";
import { rawRows, type Db } from "../client";

/**
 * Whether any change report is measuring (closed_at null) or closing (ended, report not written):
 * one statement on the pool's node-postgres. The reporter asks every 2 s and most of the time none
 * is; its two Prisma reads each time were a steady cost of a quiet console.
 */
export async function anyChangeReportPending(db: Db | Prisma.TransactionClient): Promise<boolean> {
  const [r] = await rawRows<{ pending: boolean }>(
    db,
    "SELECT EXISTS (SELECT 1 FROM change_reports WHERE closed_at IS NULL OR report IS NULL) AS pending",
    [],
  );
  return r?.pending ?? true;
}
