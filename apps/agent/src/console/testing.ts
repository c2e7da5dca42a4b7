/**
 * Helpers of the console link's tests (not shipped: only *.test.ts and *.integration-test.ts import
 * this file).
 */
import type { Db } from "@tide/db";
import type { ApiFixtures } from "@tide/devstack";
import { afterAll, beforeAll, inject } from "vitest";

export { testHello } from "@tide/contracts/testing";

/** packages/api's in-process REST call (src/testing/fixtures.ts). */
export type RestCall = (
  db: Db,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown },
) => Promise<{ status: number; body: Record<string, unknown> | null }>;

export interface ConsoleDb {
  db: Db;
  hostToken: string;
  restCall: RestCall;
}

/**
 * For an integration test file: before its tests, the integration tier's database emptied, with an
 * admin and a host token for `hostname`, and the console's REST handler to call in-process;
 * disconnected after them. The fields are there once beforeAll has run.
 */
export function useConsoleDb(hostname: string): ConsoleDb {
  const c = {} as ConsoleDb;
  beforeAll(async () => {
    const { createDb } = await import("@tide/db");
    const { loadApiFixtures } = await import("@tide/devstack");
    c.db = createDb(inject("databaseUrl"), { max: 4 });
    const fixtures = (await loadApiFixtures()) as ApiFixtures & { restCall: RestCall };
    c.restCall = fixtures.restCall;
    await fixtures.truncateAll(c.db);
    const admin = await fixtures.makeUser(c.db, "admin");
    c.hostToken = (await fixtures.callerFor(c.db, admin).hostTokens.create({ hostname })).token;
  });
  afterAll(async () => {
    await c.db?.$disconnect();
  });
  return c;
}

/**
 * Times of the samples the console stored (of the host named `hostname`, or of every host), oldest
 * first, from both tiers of its 1 s store: ingest starts the telemetry compactor, which moves
 * minutes older than ~90 s out of observation_samples into compressed chunks.
 */
export async function storedSampleTimes(db: Db, hostname?: string): Promise<string[]> {
  const { samplesBetween } = await import("@tide/db");
  const hosts = await db.host.findMany({
    where: hostname === undefined ? {} : { name: hostname },
    select: { id: true },
  });
  const times: string[] = [];
  for (const h of hosts) {
    for (const x of await samplesBetween(db, h.id, new Date(0))) times.push(x.sampledAt.toISOString());
  }
  return times.sort();
}
