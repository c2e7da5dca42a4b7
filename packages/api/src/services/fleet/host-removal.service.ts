import { TideError } from "@tide/contracts";
import type { Db } from "@tide/db";
import { actorRef, type Actor } from "../../auth/actor";
import { hostTokenCacheFor } from "../../auth/host-tokens.service";
import { recordAudit } from "../audit/audit.service";
import { TRANSACTION_OPTIONS } from "./pool-lock";

/** What removing a host did. */
export interface HostRemoved {
  id: string;
  name: string;
  /** Every host token the host had: none of them is accepted any more. */
  tokenIds: string[];
}

/**
 * Take a host out of the fleet: its host tokens stop working at once (this console process refuses
 * them from its next request; other console processes within their host-token cache's TTL, 5 s)
 * and the host is deleted with its tokens, samples and findings. Enrollment tokens it used keep
 * their history (used_by_host_id is set to null). Refused while a registered director has the
 * host's name: the director's tables follow that name, so the director goes first.
 */
export async function removeHost(db: Db, actor: Actor, ref: string): Promise<HostRemoved> {
  const removed = await db.$transaction(async (tx) => {
    const host = await tx.host.findFirst({
      where: ref.startsWith("host_") ? { OR: [{ id: ref }, { name: ref }] } : { name: ref },
      select: { id: true, name: true, roles: true },
    });
    if (!host) throw new TideError("not_found", `Host ${ref} does not exist.`);
    const director = await tx.director.findUnique({
      where: { hostname: host.name },
      select: { id: true },
    });
    if (director) {
      throw new TideError(
        "conflict",
        `Host ${host.name} is registered as director ${host.name} (${director.id}); remove the director first (Directors in the console, or tidectl director remove ${host.name}), then the host.`,
        { directorId: director.id },
      );
    }
    const tokens = await tx.hostToken.findMany({ where: { hostId: host.id }, select: { id: true } });
    const tokenIds = tokens.map((t) => t.id);
    // The host's tokens go with it (ON DELETE CASCADE): an unknown token is refused like a revoked one.
    await tx.host.delete({ where: { id: host.id } });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "host.remove",
      targetType: "host",
      targetId: host.id,
      before: { name: host.name, roles: host.roles, hostTokenIds: tokenIds },
      after: { name: host.name, removed: true },
    });
    return { id: host.id, name: host.name, tokenIds };
  }, TRANSACTION_OPTIONS);
  const cache = hostTokenCacheFor(db);
  for (const id of removed.tokenIds) cache.evictToken(id);
  return removed;
}
