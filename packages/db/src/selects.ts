import type { Prisma } from "@prisma/client";

/**
 * Named select presets (trpc starter habit): queries return only what was asked, and pool secrets
 * (hash_key, seed) are never selected outside the table builder.
 */
export const poolPublicSelect = {
  id: true,
  name: true,
  description: true,
  hashFields: true,
  altHashFields: true,
  hashMigrationStartedAt: true,
  healthCheck: true,
  createdAt: true,
} satisfies Prisma.PoolSelect;

export const bindSelect = {
  id: true,
  address: true,
  prefixBits: true,
  proto: true,
  portStart: true,
  portEnd: true,
} satisfies Prisma.BindSelect;

export const proxySelect = {
  id: true,
  poolId: true,
  address: true,
  hostname: true,
  state: true,
  stateChangedAt: true,
  healthy: true,
  healthReason: true,
  healthChangedAt: true,
  healthPinned: true,
  slot: true,
} satisfies Prisma.ProxySelect;

export const tableVersionSummarySelect = {
  id: true,
  poolId: true,
  version: true,
  contentHash: true,
  cause: true,
  reason: true,
  actorLabel: true,
  createdAt: true,
} satisfies Prisma.TableVersionSelect;

/**
 * Only for building tables (table.service.ts buildPoolTable): the one place pool secrets (hash key,
 * seed) are read. Every other pool query selects what it needs, and writes select only the id, so
 * no other code path holds the secrets.
 */
export const poolSecretsSelect = {
  id: true,
  hashKey: true,
  seed: true,
  hashFields: true,
} satisfies Prisma.PoolSelect;

export type ProxyRow = Prisma.ProxyGetPayload<{ select: typeof proxySelect }>;
export type BindRow = Prisma.BindGetPayload<{ select: typeof bindSelect }>;
export type TableVersionSummaryRow = Prisma.TableVersionGetPayload<{
  select: typeof tableVersionSummarySelect;
}>;

/** Host token lists: never the hash. */
export const hostTokenSummarySelect = {
  id: true,
  prefix: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
  host: { select: { id: true, name: true } },
  createdBy: { select: { email: true } },
} satisfies Prisma.HostTokenSelect;

export type HostTokenSummaryRow = Prisma.HostTokenGetPayload<{ select: typeof hostTokenSummarySelect }>;

export const hostSummarySelect = {
  id: true,
  name: true,
  roles: true,
  agentVersion: true,
  kernelRelease: true,
  lastSeenAt: true,
  desiredRevision: true,
} satisfies Prisma.HostSelect;

export type HostSummaryRow = Prisma.HostGetPayload<{ select: typeof hostSummarySelect }>;

export const findingSelect = {
  id: true,
  fingerprint: true,
  hostId: true,
  kind: true,
  incident: true,
  severity: true,
  status: true,
  title: true,
  subject: true,
  evidence: true,
  explanation: true,
  remedy: true,
  firstSeenAt: true,
  lastSeenAt: true,
  resolvedAt: true,
  acknowledgedBy: true,
  acknowledgedAt: true,
} satisfies Prisma.FindingSelect;

export type FindingRow = Prisma.FindingGetPayload<{ select: typeof findingSelect }>;

/** Enrollment token lists: never the hash. */
export const enrollmentTokenSummarySelect = {
  id: true,
  prefix: true,
  hostname: true,
  roles: true,
  createdAt: true,
  expiresAt: true,
  usedAt: true,
  revokedAt: true,
  createdBy: { select: { email: true } },
} satisfies Prisma.EnrollmentTokenSelect;

export type EnrollmentTokenSummaryRow = Prisma.EnrollmentTokenGetPayload<{
  select: typeof enrollmentTokenSummarySelect;
}>;
