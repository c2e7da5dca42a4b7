import type { Prisma } from "@prisma/client";
import type { Db } from "../client";

/**
 * Observation samples: one row per (host, sampledAt), payload = the agent's Observation verbatim.
 * Every query here walks the unique (host_id, sampled_at DESC) index.
 */

type Tx = Prisma.TransactionClient | Db;

export interface SampleInsert {
  id: string;
  sampledAt: Date;
  payload: Prisma.InputJsonValue;
}

/** Insert a batch in one statement; samples already stored for that instant are skipped. */
export async function insertSamples(
  tx: Tx,
  hostId: string,
  samples: readonly SampleInsert[],
): Promise<number> {
  if (samples.length === 0) return 0;
  const { count } = await tx.observationSample.createMany({
    data: samples.map((s) => ({ id: s.id, hostId, sampledAt: s.sampledAt, payload: s.payload })),
    skipDuplicates: true,
  });
  return count;
}

/** Time of the host's newest stored sample, or null. */
export async function newestSampleAt(tx: Tx, hostId: string): Promise<Date | null> {
  const row = await tx.observationSample.findFirst({
    where: { hostId },
    orderBy: { sampledAt: "desc" },
    select: { sampledAt: true },
  });
  return row?.sampledAt ?? null;
}

/** Delete the host's samples older than `before`, in one statement; returns how many went. */
export async function pruneSamples(tx: Tx, hostId: string, before: Date): Promise<number> {
  const { count } = await tx.observationSample.deleteMany({ where: { hostId, sampledAt: { lt: before } } });
  return count;
}

/** The host's samples at or after `from` (and before `to`, if given), oldest first. */
export async function samplesBetween(
  tx: Tx,
  hostId: string,
  from: Date,
  to?: Date,
): Promise<{ sampledAt: Date; payload: Prisma.JsonValue }[]> {
  return tx.observationSample.findMany({
    where: { hostId, sampledAt: to ? { gte: from, lte: to } : { gte: from } },
    orderBy: { sampledAt: "asc" },
    select: { sampledAt: true, payload: true },
  });
}

/** The host's newest sample, or null. */
export async function latestSample(tx: Tx, hostId: string) {
  return tx.observationSample.findFirst({
    where: { hostId },
    orderBy: { sampledAt: "desc" },
    select: { sampledAt: true, payload: true },
  });
}

export async function countSamples(tx: Tx, hostId: string): Promise<number> {
  return tx.observationSample.count({ where: { hostId } });
}
