/**
 * What tidectl's integration tests share: an admin of their own in the integration tier's
 * throwaway PostgreSQL, an API token of every scope, and tidectl run in-process with its fetch
 * handed straight to the REST handler (the console's /api/v1 route; no server, no port).
 */
import { newId, roleScopes } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { appRouter, createCallerFactory, handleRestRequest, hashPassword } from "@tide/api";
import { inject } from "vitest";
import { runCli } from "../cli";

declare module "vitest" {
  /** From packages/devstack's integration global setup: a fresh, migrated database. */
  interface ProvidedContext {
    databaseUrl: string;
  }
}

const callerFactory = createCallerFactory(appRouter);
export type AdminCaller = ReturnType<typeof callerFactory>;

export interface TidectlHarness {
  db: Db;
  /** The admin's tRPC caller, to set up what a test needs. */
  caller: AdminCaller;
  /** An API token with read, operate and admin (TIDE_TOKEN of `tidectl`). */
  token: string;
  /** tidectl's fetch: a request straight into the REST handler, with this database. */
  fetch(input: string, init: RequestInit): Promise<Response>;
  /** Run tidectl with TIDE_TOKEN (and `env`): its exit code and what it printed. */
  tidectl(...argv: string[]): Promise<{ code: number; out: string; err: string }>;
  close(): Promise<void>;
}

/** A harness whose admin and token are named after `name` (unique per run: a test owns its data). */
export async function startTidectlHarness(
  name: string,
  env: Record<string, string> = {},
): Promise<TidectlHarness> {
  const db = createDb(inject("databaseUrl"), { max: 4 });
  const userId = newId("user");
  const email = `tidectl-${name}@test.local`;
  await db.user.create({
    data: {
      id: userId,
      email,
      name: "tidectl",
      role: "admin",
      passwordHash: await hashPassword("x".repeat(16)),
    },
  });
  const caller = callerFactory({
    db,
    actor: {
      kind: "user",
      userId,
      email,
      name: "tidectl",
      role: "admin",
      tokenId: null,
      label: email,
      scopes: roleScopes.admin,
    },
  });
  const token = (
    await caller.tokens.create({ name: `tidectl-${name}`, scopes: ["read", "operate", "admin"] })
  ).token;
  const fetch = (input: string, init: RequestInit) => handleRestRequest(new Request(input, init), { db });
  return {
    db,
    caller,
    token,
    fetch,
    async tidectl(...argv: string[]) {
      let out = "";
      let err = "";
      const code = await runCli(argv, {
        stdout: (t) => void (out += t),
        stderr: (t) => void (err += t),
        cwd: process.cwd(),
        env: { TIDE_TOKEN: token, ...env },
        fetch,
      });
      return { code, out, err };
    },
    close: () => db.$disconnect(),
  };
}
