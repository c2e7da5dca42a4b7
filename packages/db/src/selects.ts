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

/** Only for building tables: the one place pool secrets are read. */
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
