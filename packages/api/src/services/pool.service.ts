import { randomBytes } from "node:crypto";
import { isIP } from "node:net";
import { newId, TideError, type HashField, type PoolDetail } from "@tide/contracts";
import { Prisma, type Db } from "@tide/db";
import { actorRef, type Actor } from "../auth/actor";
import { recordAudit } from "./audit.service";
import { getPool } from "./fleet.service";
import { insertTableVersion } from "./table.service";

export interface BindInput {
  /** "203.0.113.10", "203.0.113.64/26" or "2001:db8::10". */
  address: string;
  proto: "tcp" | "udp";
  portStart: number;
  portEnd?: number | undefined;
}

export interface NewPoolInput {
  name: string;
  description?: string | undefined;
  hashFields?: HashField[] | undefined;
  binds: BindInput[];
  /** Initial proxies join active: a new pool has no connections to protect yet. */
  proxies: { address: string; hostname: string }[];
  directorIds?: string[] | undefined;
}

export function parseBind(b: BindInput) {
  const [addr, prefixText] = b.address.split("/");
  const family = isIP(addr ?? "");
  if (!addr || family === 0)
    throw new TideError("bad_request", `Bind address "${b.address}" is not an IP address or CIDR.`);
  const max = family === 4 ? 32 : 128;
  const prefixBits = prefixText === undefined ? max : Number(prefixText);
  if (
    !Number.isInteger(prefixBits) ||
    prefixBits < 0 ||
    prefixBits > max ||
    (prefixText !== undefined && !/^\d+$/.test(prefixText))
  ) {
    throw new TideError("bad_request", `Bind "${b.address}": prefix must be 0..${max}.`);
  }
  const portEnd = b.portEnd ?? b.portStart;
  if (!Number.isInteger(b.portStart) || b.portStart < 0 || portEnd > 65535 || portEnd < b.portStart) {
    throw new TideError(
      "bad_request",
      `Bind "${b.address}": port range ${b.portStart}-${portEnd} is invalid.`,
    );
  }
  const address = prefixBits === max ? addr : `${addr}/${prefixBits}`;
  return { address, prefixBits, proto: b.proto, portStart: b.portStart, portEnd };
}

/** Create a pool with fresh secrets (hash key and rendezvous seed), its binds and proxies, and version 1. */
export async function createPool(
  db: Db,
  actor: Actor | { actorKind: "system"; actorId: null; actorLabel: string },
  input: NewPoolInput,
): Promise<PoolDetail> {
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(input.name)) {
    throw new TideError(
      "bad_request",
      `Pool name "${input.name}" must be lower-case letters, digits and dashes.`,
    );
  }
  if (input.binds.length === 0) throw new TideError("bad_request", "A pool needs at least one bind.");
  if (input.binds.length > 256 || input.proxies.length > 256) {
    throw new TideError("unprocessable", "A pool holds at most 256 binds and 256 proxies (GLBD limits).");
  }
  const binds = input.binds.map(parseBind);
  for (const p of input.proxies) {
    if (isIP(p.address) !== 4)
      throw new TideError("bad_request", `Proxy address "${p.address}" must be IPv4.`);
  }
  const ref = "kind" in actor ? actorRef(actor) : actor;
  const poolId = newId("pool");
  try {
    await db.$transaction(async (tx) => {
      await tx.pool.create({
        data: {
          id: poolId,
          name: input.name,
          description: input.description ?? "",
          hashKey: randomBytes(16),
          seed: randomBytes(16),
          hashFields: input.hashFields ?? ["src_addr"],
          binds: { create: binds.map((b) => ({ id: newId("bind"), ...b })) },
          proxies: {
            create: input.proxies.map((p, slot) => ({
              id: newId("proxy"),
              address: p.address,
              hostname: p.hostname,
              state: "active" as const,
              slot,
            })),
          },
          directors: input.directorIds ? { connect: input.directorIds.map((id) => ({ id })) } : undefined,
        },
      });
      const proxies = await tx.proxy.findMany({ where: { poolId }, orderBy: { slot: "asc" } });
      const version = await insertTableVersion(tx, {
        poolId,
        proxies,
        cause: "pool.create",
        reason: "",
        actor: ref,
      });
      await recordAudit(tx, {
        ...ref,
        action: "pool.create",
        targetType: "pool",
        targetId: poolId,
        poolId,
        after: {
          name: input.name,
          binds: binds.map((b) => `${b.proto}/${b.address}:${b.portStart}-${b.portEnd}`),
          proxies: input.proxies.length,
        },
        tableVersionId: version.id,
      });
    });
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002") {
      throw new TideError("conflict", `A pool named "${input.name}" or one of its proxies already exists.`);
    }
    throw e;
  }
  return getPool(db, poolId);
}
