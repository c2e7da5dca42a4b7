import type { Db, Prisma } from "@tide/db";
import { actorRef, type Actor } from "../../auth/actor";
import type { PmtuTargetSpec } from "../../schemas/hosts.schema";
import { recordAudit } from "../audit/audit.service";
import { desiredStateFor } from "./desired-state.service";
import { findHost } from "./host.service";

/**
 * Replace the path MTU targets the console asks a host's agent to check. The agent learns them from
 * its desired state: the next batch's reply carries a new revision and the agent fetches
 * /agent/desired (targets from the agent's own config are kept as well). Audited with before/after.
 */
export async function setPmtuTargets(
  db: Db,
  actor: Actor,
  input: { hostId: string; targets: PmtuTargetSpec[]; reason?: string | undefined },
): Promise<{ hostId: string; pmtuTargets: PmtuTargetSpec[]; desiredRevision: number }> {
  const host = await findHost(db, input.hostId);
  const targets = input.targets.map((t) => ({
    target: t.target,
    sizes: [...new Set(t.sizes)].sort((a, b) => a - b),
  }));
  await db.$transaction(async (tx) => {
    await tx.host.update({
      where: { id: host.id },
      data: { pmtuTargets: targets as unknown as Prisma.InputJsonValue },
    });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "host.pmtu_targets",
      targetType: "host",
      targetId: host.id,
      before: { pmtuTargets: host.pmtuTargets },
      after: { pmtuTargets: targets },
      reason: input.reason ?? "",
    });
  });
  // Bump the revision now, so agents see the change on their next batch.
  const desired = await desiredStateFor(db, host.id);
  return { hostId: host.id, pmtuTargets: targets, desiredRevision: desired.revision };
}
