import { createDb, type Db } from "@tide/db";
import { type TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Actor } from "../auth/actor";
import { callerFor, makePool, makeUser, truncateAll } from "../testing/fixtures";
import { handleRestRequest, handleTrpcRequest } from "./routes";

/**
 * Issue 27 item 5: 200 concurrent mutations at ONE pool (drains, aborts and bind changes, through
 * the tRPC caller, tRPC over HTTP and REST) answered 87 and 69 × 500, some with an empty body.
 * Every answer must be a success, a refusal the caller can act on (409 conflict: another change is
 * in progress, the proxy is in the wrong state), or 503 busy with Retry-After; never 500, never an
 * empty body. The client is the console's own (createDb defaults: a pool of 10 connections).
 */

const url = () => inject("databaseUrl");
let db: Db;
let admin: Actor;
let token: string;

beforeAll(async () => {
  db = createDb(url());
  await truncateAll(db);
  admin = await makeUser(db, "admin");
  token = (await callerFor(db, admin).tokens.create({ name: "ops", scopes: ["read", "operate", "admin"] }))
    .token;
});
afterAll(async () => {
  await db.$disconnect();
});

interface Outcome {
  via: "caller" | "trpc" | "rest";
  status: number;
  /** The error code the body names (tideCode), or "" for a success. */
  code: string;
  retryAfter: string | null;
  /** The body was empty or not JSON. */
  emptyBody: boolean;
  message: string;
}

/** HTTP status of a tRPC error code, as tRPC's adapters send it. */
const STATUS_OF: Record<string, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  UNPROCESSABLE_CONTENT: 422,
  TOO_MANY_REQUESTS: 429,
  CLIENT_CLOSED_REQUEST: 499,
  INTERNAL_SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
};

async function viaCaller(run: () => Promise<unknown>): Promise<Outcome> {
  try {
    await run();
    return { via: "caller", status: 200, code: "", retryAfter: null, emptyBody: false, message: "" };
  } catch (e) {
    const error = e as TRPCError;
    const cause = error.cause as { code?: string } | undefined;
    return {
      via: "caller",
      status: STATUS_OF[error.code] ?? 500,
      code: cause?.code ?? error.code,
      // The caller has no header; the middleware's TideError carries what Retry-After says.
      retryAfter: error.code === "SERVICE_UNAVAILABLE" ? "1" : null,
      emptyBody: false,
      message: error.code === "INTERNAL_SERVER_ERROR" ? String(error.cause ?? error.message) : error.message,
    };
  }
}

async function viaHttp(via: "trpc" | "rest", res: Promise<Response>): Promise<Outcome> {
  const r = await res;
  const text = await r.text();
  let body: Record<string, unknown> | null = null;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = null;
  }
  const inner = (body?.["error"] ?? body ?? {}) as Record<string, unknown>;
  const data = (inner["data"] ?? {}) as Record<string, unknown>;
  return {
    via,
    status: r.status,
    code: r.ok ? "" : String(data["tideCode"] ?? inner["code"] ?? ""),
    retryAfter: r.headers.get("retry-after"),
    emptyBody: body === null,
    message: String(inner["message"] ?? text.slice(0, 200)),
  };
}

function http(method: string, path: string, body?: unknown): Request {
  const headers = new Headers({ authorization: `Bearer ${token}` });
  if (body !== undefined) headers.set("content-type", "application/json");
  return new Request(`http://localhost${path}`, {
    method,
    headers,
    body: body === undefined ? null : JSON.stringify(body),
  });
}

function tally(outcomes: Outcome[]): Record<string, number> {
  const t: Record<string, number> = {};
  for (const o of outcomes) {
    const k = `${o.status}${o.code ? ` ${o.code}` : ""}`;
    t[k] = (t[k] ?? 0) + 1;
  }
  return t;
}

describe("200 concurrent mutations at one pool", () => {
  it("answer 200, 409 or 503 busy with Retry-After; never 500, never an empty body", async () => {
    const pool = await makePool(db, "contended", 16, { served: true });
    const proxyIds = pool.proxies.map((p) => p.id);
    const caller = callerFor(db, admin);
    const binds = (port: number) => [{ address: "203.0.113.10", proto: "tcp" as const, portStart: port }];
    const work: Promise<Outcome>[] = [];
    for (let i = 0; i < 200; i++) {
      const proxyId = proxyIds[i % proxyIds.length]!;
      const action = i % 2 === 0 ? "drain" : "abort";
      switch (i % 5) {
        case 0:
          work.push(viaCaller(() => caller.proxies[action]({ proxyId, reason: `load ${i}` })));
          break;
        case 1:
          work.push(
            viaHttp(
              "rest",
              handleRestRequest(
                http("POST", `/api/v1/proxies/${proxyId}/${action}`, { reason: `load ${i}` }),
                {
                  db,
                },
              ),
            ),
          );
          break;
        case 2:
          work.push(
            viaHttp(
              "trpc",
              handleTrpcRequest(
                http("POST", `/api/trpc/proxies.${action}`, { proxyId, reason: `load ${i}` }),
                {
                  db,
                },
              ),
            ),
          );
          break;
        case 3:
          work.push(
            viaCaller(() =>
              caller.pools.setBinds({ poolId: pool.id, binds: binds(1000 + i), reason: `load ${i}` }),
            ),
          );
          break;
        default:
          work.push(
            viaHttp(
              "rest",
              handleRestRequest(
                http("PUT", `/api/v1/pools/${pool.id}/binds`, {
                  binds: binds(1000 + i),
                  reason: `load ${i}`,
                }),
                { db },
              ),
            ),
          );
      }
    }
    const outcomes = await Promise.all(work);
    console.log(`200 concurrent mutations at one pool: ${JSON.stringify(tally(outcomes))}`);
    const busyWhy: Record<string, number> = {};
    for (const o of outcomes.filter((x) => x.status === 503)) {
      const why = /\((.*?)\)/.exec(o.message)?.[1] ?? o.message;
      busyWhy[why] = (busyWhy[why] ?? 0) + 1;
    }
    console.log(`  503 busy because: ${JSON.stringify(busyWhy)}`);
    const failed = outcomes.filter((o) => o.status >= 500 && o.status !== 503);
    for (const o of failed.slice(0, 5)) console.log(`  ${o.via} ${o.status}: ${o.message.slice(0, 400)}`);
    expect(failed.map((o) => `${o.via} ${o.status} ${o.message.slice(0, 200)}`)).toEqual([]);
    expect(outcomes.filter((o) => o.emptyBody)).toEqual([]);
    for (const o of outcomes.filter((x) => x.status === 503)) {
      expect(o.code).toBe("busy");
      expect(Number(o.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    // Every status is one the caller can act on.
    expect(outcomes.every((o) => [200, 409, 503].includes(o.status))).toBe(true);
  }, 120_000);
});
