/**
 * Operators think in names: a pool by name, a proxy by host name or address, a director by host
 * name, a user by email. An argument that is already an id (pool_…, prx_…, dir_…, usr_…) is used
 * as is; anything else is looked up in the list endpoint. No match or several is exit 1 with the
 * candidates named.
 */
import { CommandError } from "../cli-io";
import { type ApiClient } from "./client";
import { type DirectorReply, type PoolSummaryReply, type ProxyReply, type UserReply } from "./replies";

const isId = (prefix: string, ref: string) => new RegExp(`^${prefix}_[0-9a-z]{4,40}$`).test(ref);

function one<T>(what: string, ref: string, matches: T[], label: (x: T) => string, all: T[]): T {
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) {
    const known = all.map(label).slice(0, 20).join(", ");
    throw new CommandError(`no ${what} ${JSON.stringify(ref)}${known ? ` (known: ${known})` : ""}`);
  }
  throw new CommandError(
    `${matches.length} ${what}s match ${JSON.stringify(ref)}: ${matches.map(label).join(", ")}; give the id`,
  );
}

export async function poolId(api: ApiClient, ref: string): Promise<string> {
  if (isId("pool", ref)) return ref;
  const pools = await api.request<PoolSummaryReply[]>("GET", "/pools");
  const label = (p: PoolSummaryReply) => p.name;
  return one(
    "pool",
    ref,
    pools.filter((p) => p.name === ref),
    label,
    pools,
  ).id;
}

export async function proxyId(api: ApiClient, ref: string): Promise<string> {
  if (isId("prx", ref)) return ref;
  const proxies = await api.request<ProxyReply[]>("GET", "/proxies");
  const label = (p: ProxyReply) => `${p.hostname} ${p.address} (${p.id})`;
  const matches = proxies.filter((p) => p.hostname === ref || p.address === ref);
  return one("proxy", ref, matches, label, proxies).id;
}

export async function directorId(api: ApiClient, ref: string): Promise<string> {
  if (isId("dir", ref)) return ref;
  const directors = await api.request<DirectorReply[]>("GET", "/directors");
  const label = (d: DirectorReply) => d.hostname;
  return one(
    "director",
    ref,
    directors.filter((d) => d.hostname === ref),
    label,
    directors,
  ).id;
}

export async function userId(api: ApiClient, ref: string): Promise<string> {
  if (isId("usr", ref)) return ref;
  const users = await api.request<UserReply[]>("GET", "/users");
  const label = (u: UserReply) => u.email;
  const email = ref.toLowerCase();
  return one(
    "user",
    ref,
    users.filter((u) => u.email === email),
    label,
    users,
  ).id;
}
