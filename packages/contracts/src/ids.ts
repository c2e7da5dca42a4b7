import { z } from "zod";

/** Prefixed ids (dub habit): the prefix says what an id points at in logs, URLs and the audit log. */
export const idPrefixes = {
  pool: "pool",
  proxy: "prx",
  director: "dir",
  bind: "bnd",
  user: "usr",
  session: "ses",
  token: "tok",
  tableVersion: "tv",
  audit: "aud",
  host: "host",
  hostToken: "htk",
  enrollmentToken: "enr",
  finding: "fnd",
  observation: "obs",
} as const;

export type IdKind = keyof typeof idPrefixes;

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case

/** A new random id, e.g. `prx_4k9x2m7q1c8d0fhj`. 80 random bits. */
export function newId(kind: IdKind): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  let out = "";
  for (const b of bytes) out += ALPHABET[b & 31];
  return `${idPrefixes[kind]}_${out}`;
}

/** zod schema for an id of one kind. */
export function idSchema(kind: IdKind) {
  const prefix = idPrefixes[kind];
  return z
    .string()
    .regex(new RegExp(`^${prefix}_[0-9a-z]{4,40}$`), `must be a ${kind} id (${prefix}_…)`)
    .describe(`${kind} id, prefixed "${prefix}_"`);
}

export const PoolId = idSchema("pool");
export const ProxyId = idSchema("proxy");
export const DirectorId = idSchema("director");
export const TokenId = idSchema("token");
export const TableVersionId = idSchema("tableVersion");
export const UserId = idSchema("user");
export const HostRecordId = idSchema("host");
export const HostTokenId = idSchema("hostToken");
export const EnrollmentTokenId = idSchema("enrollmentToken");
