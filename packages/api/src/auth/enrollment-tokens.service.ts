import {
  ENROLLMENT_TOKEN_PREFIX,
  newId,
  TideError,
  type EnrollIn,
  type EnrollmentTokenCreated,
  type EnrollmentTokenCreateIn,
  type EnrollmentTokenSummary,
  type EnrollOut,
  type HostRole,
} from "@tide/contracts";
import {
  claimEnrollmentToken,
  enrollmentTokenStatus,
  enrollmentTokenSummarySelect,
  type Db,
  type EnrollmentTokenSummaryRow,
} from "@tide/db";
import { publicUrlEnv } from "../env";
import { recordAudit } from "../services/audit/audit.service";
import { TRANSACTION_OPTIONS } from "../services/fleet/pool-lock";
import { TIDE_VERSION } from "../version";
import { actorRef, type Actor } from "./actor";
import { enrollmentTokenState, redeemRefusal } from "./enrollment-token.plan";
import { issueHostToken } from "./host-tokens.service";
import { digestSecret, randomSecret } from "./secrets";

/**
 * Enrollment tokens (`tide_enroll_…`, contracts/enrollment.ts): an admin makes one for a host name
 * and its roles; the host trades it, once, for its own host token (`tide-agent enroll URL --token
 * …` -> POST /api/v1/enroll). Stored as sha256 like every other secret; the secret and the command
 * holding it are returned only by create, and never logged.
 */

const SHOWN_PREFIX_LEN = ENROLLMENT_TOKEN_PREFIX.length + 6;

/** Most tokens a list returns (newest first): pending ones are few, the rest is history. */
export const ENROLLMENT_LIST_MAX = 200;

function toSummary(t: EnrollmentTokenSummaryRow, now: Date): EnrollmentTokenSummary {
  return {
    id: t.id,
    prefix: t.prefix,
    hostname: t.hostname,
    roles: t.roles as HostRole[],
    state: enrollmentTokenState(t, now),
    createdBy: t.createdBy.email,
    createdAt: t.createdAt.toISOString(),
    expiresAt: t.expiresAt.toISOString(),
    usedAt: t.usedAt?.toISOString() ?? null,
    revokedAt: t.revokedAt?.toISOString() ?? null,
  };
}

/**
 * The console URL for the enroll command: TIDE_PUBLIC_URL, else where the admin's request reached
 * the console (Context.origin), else null.
 */
export function consoleUrlFor(origin: string | null | undefined): string | null {
  return publicUrlEnv().TIDE_PUBLIC_URL ?? origin ?? null;
}

/** The exact command a host runs to enroll. */
export function enrollCommand(consoleUrl: string, token: string): string {
  return `tide-agent enroll ${consoleUrl} --token ${token}`;
}

export async function createEnrollmentToken(
  db: Db,
  actor: Actor,
  input: EnrollmentTokenCreateIn,
  consoleUrl: string | null,
  now = new Date(),
): Promise<EnrollmentTokenCreated> {
  if (!consoleUrl) {
    throw new TideError(
      "unprocessable",
      "The console cannot tell its own URL from this request (no usable Host header): set TIDE_PUBLIC_URL to the URL hosts reach it at.",
    );
  }
  const token = `${ENROLLMENT_TOKEN_PREFIX}${randomSecret()}`;
  const roles = [...new Set(input.roles)];
  const expiresAt = new Date(now.getTime() + input.expiresInMinutes * 60_000);
  return db.$transaction(async (tx) => {
    const row = await tx.enrollmentToken.create({
      data: {
        id: newId("enrollmentToken"),
        prefix: token.slice(0, SHOWN_PREFIX_LEN),
        tokenHash: digestSecret(token),
        hostname: input.hostname,
        roles,
        createdById: actor.userId,
        createdAt: now,
        expiresAt,
      },
      select: enrollmentTokenSummarySelect,
    });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "enrollment_token.create",
      targetType: "enrollment_token",
      targetId: row.id,
      after: { hostname: row.hostname, roles, prefix: row.prefix, expiresAt: expiresAt.toISOString() },
    });
    return { token, command: enrollCommand(consoleUrl, token), summary: toSummary(row, now) };
  });
}

export async function listEnrollmentTokens(
  db: Db,
  filter: { hostname?: string | undefined } = {},
  now = new Date(),
): Promise<EnrollmentTokenSummary[]> {
  const rows = await db.enrollmentToken.findMany({
    where: filter.hostname ? { hostname: filter.hostname } : {},
    select: enrollmentTokenSummarySelect,
    orderBy: { createdAt: "desc" },
    take: ENROLLMENT_LIST_MAX,
  });
  return rows.map((r) => toSummary(r, now));
}

/** Revoke a pending token; a used, expired or already revoked one is refused (409) with the reason. */
export async function revokeEnrollmentToken(
  db: Db,
  actor: Actor,
  tokenId: string,
  now = new Date(),
): Promise<EnrollmentTokenSummary> {
  // One conditional UPDATE: racing a host's redeem, either the host gets the token or the admin
  // revokes it, never both.
  const { count } = await db.enrollmentToken.updateMany({
    where: { id: tokenId, usedAt: null, revokedAt: null, expiresAt: { gt: now } },
    data: { revokedAt: now },
  });
  const row = await db.enrollmentToken.findUnique({
    where: { id: tokenId },
    select: enrollmentTokenSummarySelect,
  });
  if (!row) throw new TideError("not_found", `Enrollment token ${tokenId} does not exist.`);
  if (count === 0) {
    const state = enrollmentTokenState(row, now);
    const why =
      state === "used"
        ? `was already used at ${row.usedAt?.toISOString()}; to take the host out, remove host ${row.hostname}`
        : state === "revoked"
          ? `was already revoked at ${row.revokedAt?.toISOString()}`
          : `expired at ${row.expiresAt.toISOString()}; it can no longer be used`;
    throw new TideError("conflict", `Enrollment token ${tokenId} for ${row.hostname} ${why}.`);
  }
  await recordAudit(db, {
    ...actorRef(actor),
    action: "enrollment_token.revoke",
    targetType: "enrollment_token",
    targetId: tokenId,
    before: { revokedAt: null },
    after: { hostname: row.hostname, revokedAt: now.toISOString() },
  });
  return toSummary(row, now);
}

/**
 * A host trades its enrollment token for its own host token. No other credential: the token is it.
 * In one transaction: claim the token (one UPDATE, which only an unused, unrevoked, unexpired token
 * passes, by the database's clock), issue the host token through the same path as an admin's
 * (issueHostToken), record which host used it and set the host's roles. The token's creator is the
 * accountable person in the audit log. A token that cannot be claimed is refused with why
 * (enrollment-token.plan.ts redeemRefusal), read in the same transaction, so by the same clock.
 */
export async function redeemEnrollmentToken(db: Db, input: EnrollIn): Promise<EnrollOut> {
  const tokenHash = digestSecret(input.token);
  const outcome = await db.$transaction(async (tx) => {
    const grant = await claimEnrollmentToken(tx, tokenHash);
    if (!grant) {
      const status = await enrollmentTokenStatus(tx, tokenHash);
      return { refused: redeemRefusal(status, status?.now ?? new Date()) };
    }
    const audit = {
      actorKind: "user" as const,
      actorId: grant.createdById,
      actorLabel: `${grant.createdByEmail} (enrollment token ${grant.id})`,
    };
    const issued = await issueHostToken(tx, { createdById: grant.createdById, audit }, grant.hostname);
    const hostId = issued.summary.hostId;
    await tx.host.update({
      where: { id: hostId },
      data: { roles: grant.roles, agentVersion: input.agentVersion, kernelRelease: input.kernelRelease },
    });
    await tx.enrollmentToken.update({ where: { id: grant.id }, data: { usedByHostId: hostId } });
    await recordAudit(tx, {
      ...audit,
      action: "enrollment_token.redeem",
      targetType: "enrollment_token",
      targetId: grant.id,
      before: { usedAt: null },
      after: {
        hostname: grant.hostname,
        hostId,
        roles: grant.roles,
        hostTokenId: issued.summary.id,
        hostTokenPrefix: issued.summary.prefix,
        agentVersion: input.agentVersion,
        kernelRelease: input.kernelRelease,
        usedAt: grant.usedAt.toISOString(),
      },
    });
    const reply: EnrollOut = {
      hostId,
      hostname: grant.hostname,
      roles: grant.roles as HostRole[],
      hostToken: issued.token,
      consoleVersion: TIDE_VERSION,
    };
    return { reply };
  }, TRANSACTION_OPTIONS);
  if ("refused" in outcome) throw outcome.refused;
  return outcome.reply;
}
