import {
  TideError,
  versionSkew,
  type AgentHello,
  type AgentHelloReply,
  type DesiredState,
} from "@tide/contracts";
import type { Db, Prisma } from "@tide/db";
import type { HostCaller } from "../../auth/actor";
import { TIDE_VERSION } from "../../version";
import { desiredStateFor, waitForDesired } from "./desired-state.service";

/**
 * The agent's first call (and after every reconnect): record what the host runs, answer with desired
 * state. An agent too far from this console's version (contracts' versionSkew) is recorded, so its
 * host page says why, and refused with the reason: it must not act on a desired state it may misread.
 */
export async function agentHello(
  db: Db,
  host: HostCaller,
  input: AgentHello,
  consoleVersion: string = TIDE_VERSION,
): Promise<AgentHelloReply> {
  if (input.hostname !== host.hostname) {
    throw new TideError(
      "forbidden",
      `This token was issued for host ${host.hostname}; it cannot speak for ${input.hostname}.`,
    );
  }
  await db.host.update({
    where: { id: host.hostId },
    data: {
      roles: [...new Set(input.roles)],
      agentVersion: input.agentVersion,
      kernelRelease: input.kernelRelease,
      probes: input.probes as Prisma.InputJsonValue,
      dataPlane: input.dataPlane as Prisma.InputJsonValue,
      lastSeenAt: new Date(),
    },
  });
  const skew = versionSkew(consoleVersion, input.agentVersion);
  if (!skew.compatible) {
    throw new TideError("conflict", skew.reason, {
      reason: "version_skew",
      consoleVersion,
      agentVersion: input.agentVersion,
    });
  }
  return { hostId: host.hostname, desired: await desiredStateFor(db, host.hostId) };
}

/** The desired state now, or (with `after` and a wait) as soon as it differs from revision `after`. */
export async function agentDesired(
  db: Db,
  host: HostCaller,
  wait: { after?: number | undefined; waitMs: number } = { waitMs: 0 },
  listen?: (onChange: () => void) => Promise<() => void>,
): Promise<DesiredState> {
  await db.host.update({ where: { id: host.hostId }, data: { lastSeenAt: new Date() } });
  if (wait.after === undefined || listen === undefined) return desiredStateFor(db, host.hostId);
  return waitForDesired(db, host.hostId, wait.after, wait.waitMs, listen);
}
