/**
 * Vitest globalSetup of the integration project: one throwaway PostgreSQL cluster per run, migrated
 * (no seed), shared by every integration test file (files run one at a time: see vitest.config.mts).
 * Tests get its URL with `inject("databaseUrl")`; process.env.DATABASE_URL is set too, for code
 * that reads it (workers are started after this runs and inherit it).
 */
import type { TestProject } from "vitest/node";
import { migrate } from "./migrations";
import { startTempCluster, type TempCluster } from "./postgres/temp-cluster";

declare module "vitest" {
  interface ProvidedContext {
    /** A fresh database with prisma/migrations applied; role `tide` has CREATEDB. */
    databaseUrl: string;
  }
}

let cluster: TempCluster | undefined;

export async function setup(project: TestProject): Promise<void> {
  cluster = await startTempCluster();
  await migrate(cluster.url, { quiet: true });
  process.env.DATABASE_URL = cluster.url;
  project.provide("databaseUrl", cluster.url);
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
  cluster = undefined;
}
