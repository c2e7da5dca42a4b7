import { newId, roleScopes, type Role } from "@tide/contracts";
import type { Db } from "@tide/db";
import { systemActorRef, type Actor } from "../auth/actor";
import { hashPassword } from "../auth/secrets";
import { createPool } from "../services/tables/pool.service";
import { appRouter } from "../routers/_app";
import { createContext } from "../context";
import { openApiResponse } from "../http/openapi-handler";
import { createCallerFactory } from "../trpc";

/** Test fixtures for integration tests against a real PostgreSQL (each test file owns its data). */

export async function truncateAll(db: Db): Promise<void> {
  await db.$executeRawUnsafe(
    `TRUNCATE finding_events, findings, observation_samples, observation_chunks, observation_rollups, enrollment_tokens, host_tokens, hosts, audit_events, table_versions, proxies, binds, "_DirectorToPool", directors, pools, api_tokens, sessions, users CASCADE`,
  );
}

export async function makeUser(
  db: Db,
  role: Role,
  password = "correct horse battery staple",
): Promise<Actor & { password: string }> {
  const id = newId("user");
  const email = `${role}-${id.slice(-6)}@test.local`;
  await db.user.create({
    data: { id, email, name: role, role, passwordHash: await hashPassword(password) },
  });
  return {
    kind: "user",
    userId: id,
    email,
    name: role,
    role,
    tokenId: null,
    label: email,
    scopes: roleScopes[role],
    password,
  };
}

/**
 * A pool with proxyCount active proxies. `served`: a director (`<name>-director`) serves it, so
 * the pool invariants apply to its proxies (they protect traffic, which needs a director).
 */
export async function makePool(db: Db, name: string, proxyCount: number, opts: { served?: boolean } = {}) {
  const directorIds = opts.served
    ? [(await db.director.create({ data: { id: newId("director"), hostname: `${name}-director` } })).id]
    : [];
  return createPool(db, systemActorRef("test"), {
    name,
    binds: [{ address: "203.0.113.10", proto: "tcp", portStart: 443 }],
    proxies: Array.from({ length: proxyCount }, (_, i) => ({
      address: `10.99.${name.length}.${i + 1}`,
      hostname: `${name}-proxy-${i + 1}`,
    })),
    directorIds,
  });
}

const createCaller = createCallerFactory(appRouter);

export function callerFor(db: Db, actor: Actor | null) {
  return createCaller({ db, actor });
}

/** Call the REST API exactly as the console's /api/v1 route handler does. */
export async function restCall(
  db: Db,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown } = {},
): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const headers = new Headers({ "content-type": "application/json" });
  if (opts.token) headers.set("authorization", `Bearer ${opts.token}`);
  const body = opts.body === undefined ? null : JSON.stringify(opts.body);
  const req = new Request(`http://localhost/api/v1${path}`, { method, headers, body });
  const res = await openApiResponse(req, body, {
    endpoint: "/api/v1",
    ctx: await createContext({ headers: req.headers, db }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
}
