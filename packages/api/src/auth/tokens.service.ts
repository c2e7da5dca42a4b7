import { newId, roleScopes, TideError, type ApiTokenSummary, type Scope } from "@tide/contracts";
import type { Db } from "@tide/db";
import { recordAudit } from "../services/audit/audit.service";
import { actorRef, type Actor } from "./actor";
import { listenForAuthChanges } from "../live/host-live";
import { ApiTokenCache } from "./auth-cache";
import { digestSecret, randomSecret } from "./secrets";

/** Every API token starts with this, so secret scanners and humans recognise it. */
export const TOKEN_PREFIX = "tide_";
const SHOWN_PREFIX_LEN = TOKEN_PREFIX.length + 6;

const tokenSummarySelect = {
  id: true,
  name: true,
  prefix: true,
  scopes: true,
  createdAt: true,
  expiresAt: true,
  lastUsedAt: true,
  revokedAt: true,
  createdBy: { select: { email: true } },
} as const;

type TokenRow = {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  createdBy: { email: string };
};

function toSummary(t: TokenRow): ApiTokenSummary {
  return {
    id: t.id,
    name: t.name,
    prefix: t.prefix,
    scopes: t.scopes as Scope[],
    createdBy: t.createdBy.email,
    createdAt: t.createdAt.toISOString(),
    expiresAt: t.expiresAt?.toISOString() ?? null,
    lastUsedAt: t.lastUsedAt?.toISOString() ?? null,
    revokedAt: t.revokedAt?.toISOString() ?? null,
  };
}

export async function listTokens(db: Db): Promise<ApiTokenSummary[]> {
  const rows = await db.apiToken.findMany({ select: tokenSummarySelect, orderBy: { createdAt: "desc" } });
  return rows.map(toSummary);
}

export async function createToken(
  db: Db,
  actor: Actor,
  input: { name: string; scopes: Scope[]; expiresInDays?: number | undefined },
): Promise<{ token: string; summary: ApiTokenSummary }> {
  const missing = input.scopes.filter((s) => !actor.scopes.includes(s));
  if (missing.length > 0) {
    throw new TideError("forbidden", `You cannot grant scope(s) you do not hold: ${missing.join(", ")}.`, {
      missing,
    });
  }
  const token = `${TOKEN_PREFIX}${randomSecret()}`;
  const expiresAt =
    input.expiresInDays === undefined ? null : new Date(Date.now() + input.expiresInDays * 86400_000);
  const scopes = [...new Set(input.scopes)];
  const row = await db.apiToken.create({
    data: {
      id: newId("token"),
      name: input.name,
      prefix: token.slice(0, SHOWN_PREFIX_LEN),
      tokenHash: digestSecret(token),
      scopes,
      createdById: actor.userId,
      expiresAt,
    },
    select: tokenSummarySelect,
  });
  await recordAudit(db, {
    ...actorRef(actor),
    action: "token.create",
    targetType: "token",
    targetId: row.id,
    after: { name: row.name, scopes, expiresAt: expiresAt?.toISOString() ?? null },
  });
  return { token, summary: toSummary(row) };
}

export async function revokeToken(db: Db, actor: Actor, tokenId: string): Promise<ApiTokenSummary> {
  const existing = await db.apiToken.findUnique({ where: { id: tokenId }, select: tokenSummarySelect });
  if (!existing) throw new TideError("not_found", `Token ${tokenId} does not exist.`);
  if (existing.revokedAt) {
    throw new TideError(
      "conflict",
      `Token ${tokenId} was already revoked at ${existing.revokedAt.toISOString()}.`,
    );
  }
  const row = await db.apiToken.update({
    where: { id: tokenId },
    data: { revokedAt: new Date() },
    select: tokenSummarySelect,
  });
  // Refused by this process from now on; other consoles hear it from the database (auth_notify).
  apiTokenCacheFor(db).evict("token", tokenId);
  await recordAudit(db, {
    ...actorRef(actor),
    action: "token.revoke",
    targetType: "token",
    targetId: tokenId,
    before: { revokedAt: null },
    after: { revokedAt: row.revokedAt?.toISOString() ?? null },
  });
  return toSummary(row);
}

const caches = new WeakMap<object, ApiTokenCache>();

/** This process's API token cache for `db` (notified over the process's shared LISTEN connection). */
export function apiTokenCacheFor(db: Db): ApiTokenCache {
  let c = caches.get(db);
  if (!c) {
    c = new ApiTokenCache(listenForAuthChanges);
    caches.set(db, c);
  }
  return c;
}

/** How often a token's use is recorded at most, ms: hot runbooks do not write on every call. */
const LAST_USED_EVERY_MS = 60_000;

/**
 * Resolve a bearer token to an actor. A token acts with the intersection of its scopes and its
 * creator's current role, so demoting a user also limits the tokens they made. Answered from this
 * process's memory while the database has announced no change to the token or its user
 * (auth-cache.ts); unknown, revoked and expired tokens are never remembered.
 */
export async function actorFromToken(db: Db, token: string): Promise<Actor | null> {
  if (!token.startsWith(TOKEN_PREFIX)) return null;
  const digest = digestSecret(token);
  const cache = apiTokenCacheFor(db);
  const hit = cache.get(digest);
  if (hit) {
    const now = Date.now();
    if (hit.lastUsedAt === null || now - hit.lastUsedAt > LAST_USED_EVERY_MS) {
      hit.lastUsedAt = now;
      await db.apiToken.update({ where: { id: hit.tokenId }, data: { lastUsedAt: new Date(now) } });
    }
    return hit.actor;
  }
  const generation = cache.begin();
  const row = await db.apiToken.findUnique({
    where: { tokenHash: digest },
    select: {
      id: true,
      name: true,
      scopes: true,
      expiresAt: true,
      revokedAt: true,
      lastUsedAt: true,
      createdBy: { select: { id: true, email: true, name: true, role: true, disabledAt: true } },
    },
  });
  const now = new Date();
  if (!row || row.revokedAt || (row.expiresAt && row.expiresAt <= now) || row.createdBy.disabledAt) {
    return null;
  }
  let lastUsedAt = row.lastUsedAt?.getTime() ?? null;
  if (lastUsedAt === null || now.getTime() - lastUsedAt > LAST_USED_EVERY_MS) {
    await db.apiToken.update({ where: { id: row.id }, data: { lastUsedAt: now } });
    lastUsedAt = now.getTime();
  }
  const held = roleScopes[row.createdBy.role];
  const scopes = (row.scopes as Scope[]).filter((s) => held.includes(s));
  const actor: Actor = {
    kind: "token",
    userId: row.createdBy.id,
    email: row.createdBy.email,
    name: row.createdBy.name,
    role: row.createdBy.role,
    tokenId: row.id,
    label: `token ${row.name} (${row.createdBy.email})`,
    scopes,
  };
  cache.set(
    digest,
    {
      actor,
      tokenId: row.id,
      userId: row.createdBy.id,
      tokenExpiresAt: row.expiresAt?.getTime() ?? null,
      lastUsedAt,
    },
    generation,
  );
  return actor;
}
