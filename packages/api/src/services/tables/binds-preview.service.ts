import { TideError, type BindsPreview } from "@tide/contracts";
import { bindSelect, type Db } from "@tide/db";
import { parseBindLabels } from "../transitions/change-safety.plan";
import { predictBindChange } from "../transitions/change-safety.service";
import { parseBind } from "./pool.service";

/**
 * GET /pools/{poolId}/binds/preview: what replacing the pool's binds with `binds` (comma-separated
 * labels) would do to its established connections, before PUT …/binds. Each bind is validated as
 * the change validates it (field errors name binds[i]); overlaps are the change's to refuse.
 * Its own file: pool.service.ts asks change-safety.service.ts, which must not ask it back.
 */
export async function previewBinds(db: Db, input: { poolId: string; binds: string }): Promise<BindsPreview> {
  const after = parseBindLabels(input.binds).map((b, i) => parseBind(b, `binds[${i}]`));
  const pool = await db.pool.findUnique({
    where: { id: input.poolId },
    select: { id: true, binds: { select: bindSelect } },
  });
  if (!pool) throw new TideError("not_found", `Pool ${input.poolId} does not exist.`);
  const p = await predictBindChange(db, db, { poolId: pool.id, before: pool.binds, after });
  return { poolId: pool.id, ...p };
}
