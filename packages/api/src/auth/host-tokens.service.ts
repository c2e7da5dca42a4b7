import { HOST_TOKEN_PREFIX, newId, TideError } from "@tide/contracts";
import {
  hostTokenByHash,
  hostTokenSummarySelect,
  touchHostToken,
  type ActorKind,
  type Db,
  type HostTokenSummaryRow,
  type Prisma,
} from "@tide/db";
import type { HostTokenSummary } from "../schemas/hosts.schema";
import { recordAudit } from "../services/audit/audit.service";
import { actorRef, type Actor, type HostCaller } from "./actor";
import { listenForAuthChanges } from "../live/host-live";
import { HostTokenCache } from "./host-token-cache";
import { digestSecret, randomSecret } from "./secrets";

/**
 * Host tokens (`tide_host_…`): one per agent, bound to one host name, scope "agent" only. Like API
 * tokens they are shown once and stored as sha256; unlike them they act for a host, not a user.
 */

const SHOWN_PREFIX_LEN = HOST_TOKEN_PREFIX.length + 6;

/** Who is calling an agent procedure: the host its token was issued for. */
function toSummary(t: HostTokenSummaryRow): HostTokenSummary {
  return {
    id: t.id,
    hostId: t.host.id,
    hostname: t.host.name,
    prefix: t.prefix,
    createdBy: t.createdBy.email,
    createdAt: t.createdAt.toISOString(),
    lastUsedAt: t.lastUsedAt?.toISOString() ?? null,
    revokedAt: t.revokedAt?.toISOString() ?? null,
  };
}

export async function listHostTokens(db: Db, hostname?: string): Promise<HostTokenSummary[]> {
  const rows = await db.hostToken.findMany({
    where: hostname ? { host: { name: hostname } } : {},
    select: hostTokenSummarySelect,
    orderBy: { createdAt: "desc" },
  });
  return rows.map(toSummary);
}

/** Who a host token is issued on behalf of: the accountable user and the audit identity. */
export interface HostTokenIssuer {
  /** The user recorded as the token's creator (an admin, or the admin who made an enrollment token). */
  createdById: string;
  /** Who the audit log names as doing it (actorRef of the caller, or the enrollment's label). */
  audit: { actorKind: ActorKind; actorId: string | null; actorLabel: string };
}

/**
 * Issue a token for a host name inside `tx` (the host is registered if new): createHostToken for an
 * admin's request, and redeeming an enrollment token, which must spend the enrollment token and
 * issue this one in one transaction. The secret is returned only here.
 */
export async function issueHostToken(
  tx: Prisma.TransactionClient,
  issuer: HostTokenIssuer,
  hostname: string,
): Promise<{ token: string; summary: HostTokenSummary }> {
  const token = `${HOST_TOKEN_PREFIX}${randomSecret()}`;
  const host = await tx.host.upsert({
    where: { name: hostname },
    create: { id: newId("host"), name: hostname },
    update: {},
    select: { id: true },
  });
  const row = await tx.hostToken.create({
    data: {
      id: newId("hostToken"),
      hostId: host.id,
      prefix: token.slice(0, SHOWN_PREFIX_LEN),
      tokenHash: digestSecret(token),
      createdById: issuer.createdById,
    },
    select: hostTokenSummarySelect,
  });
  await recordAudit(tx, {
    ...issuer.audit,
    action: "host_token.create",
    targetType: "host_token",
    targetId: row.id,
    after: { hostId: host.id, hostname, prefix: row.prefix },
  });
  return { token, summary: toSummary(row) };
}

/** Issue a token for a host name (the host is registered if new). The secret is returned only here. */
export async function createHostToken(
  db: Db,
  actor: Actor,
  input: { hostname: string },
): Promise<{ token: string; summary: HostTokenSummary }> {
  return db.$transaction((tx) =>
    issueHostToken(tx, { createdById: actor.userId, audit: actorRef(actor) }, input.hostname),
  );
}

export async function revokeHostToken(db: Db, actor: Actor, tokenId: string): Promise<HostTokenSummary> {
  const existing = await db.hostToken.findUnique({ where: { id: tokenId }, select: hostTokenSummarySelect });
  if (!existing) throw new TideError("not_found", `Host token ${tokenId} does not exist.`);
  if (existing.revokedAt) {
    throw new TideError(
      "conflict",
      `Host token ${tokenId} was already revoked at ${existing.revokedAt.toISOString()}.`,
    );
  }
  const row = await db.hostToken.update({
    where: { id: tokenId },
    data: { revokedAt: new Date() },
    select: hostTokenSummarySelect,
  });
  // Refused from this process's next request on; other consoles hear it from the database
  // (migration auth_notify), or at the latest within the cache's TTL.
  hostTokenCacheFor(db).evictToken(tokenId);
  await recordAudit(db, {
    ...actorRef(actor),
    action: "host_token.revoke",
    targetType: "host_token",
    targetId: tokenId,
    before: { revokedAt: null },
    after: { hostname: row.host.name, revokedAt: row.revokedAt?.toISOString() ?? null },
  });
  return toSummary(row);
}

const caches = new WeakMap<Db, HostTokenCache>();

/** This process's cache of resolved host tokens for `db` (host-token-cache.ts). */
export function hostTokenCacheFor(db: Db): HostTokenCache {
  let c = caches.get(db);
  if (!c) {
    const cache = new HostTokenCache();
    c = cache;
    caches.set(db, c);
    // A revocation by another console (or anyone's SQL) ends the entry when the database announces
    // it; without the LISTEN, the TTL alone bounds it (as before).
    listenForAuthChanges((change) => {
      if (change.startsWith("host-token:")) cache.evictToken(change.slice("host-token:".length));
      else if (change === "all" || change === "host-token") cache.clear();
    }).catch((e: unknown) =>
      console.error("host token cache: LISTEN failed; the TTL alone bounds revocations", e),
    );
  }
  return c;
}

/**
 * Resolve a bearer `tide_host_…` token to its host, or null if unknown or revoked. A token resolved
 * less than HOST_TOKEN_CACHE_TTL_MS ago is answered from memory (host-token-cache.ts says how a
 * revocation is still honoured).
 */
export async function hostFromToken(db: Db, token: string): Promise<HostCaller | null> {
  if (!token.startsWith(HOST_TOKEN_PREFIX)) return null;
  const digest = digestSecret(token);
  const cache = hostTokenCacheFor(db);
  const cached = cache.get(digest);
  if (cached) return cached;
  const row = await hostTokenByHash(db, digest);
  if (!row || row.revokedAt) return null;
  const now = new Date();
  // Agents call every few seconds: record use at most once a minute.
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > 60_000) {
    await touchHostToken(db, row.id, now);
  }
  const caller: HostCaller = {
    hostId: row.hostId,
    hostname: row.hostName,
    tokenId: row.id,
    label: `host ${row.hostName} (${row.id})`,
  };
  cache.set(digest, caller);
  return caller;
}
