import type { Db } from "@tide/db";

/**
 * Names of audit targets: the audit log stores ids (names change, ids do not), people search and
 * read by name. Targets that no longer exist fall back to the name their event recorded.
 */

/** Most ids a name filter expands to (a filter that matches more is too broad to mean one target). */
const TARGET_MATCH_MAX = 500;

/** Ids of every target whose id is `text` or whose name (pool, host name, email, token) contains it. */
export async function targetIdsMatching(db: Db, text: string): Promise<string[]> {
  const contains = { contains: text, mode: "insensitive" as const };
  const take = TARGET_MATCH_MAX;
  const select = { id: true } as const;
  const found = await Promise.all([
    db.pool.findMany({ where: { name: contains }, select, take }),
    db.proxy.findMany({ where: { hostname: contains }, select, take }),
    db.director.findMany({ where: { hostname: contains }, select, take }),
    db.user.findMany({ where: { email: contains }, select, take }),
    db.apiToken.findMany({ where: { name: contains }, select, take }),
    db.host.findMany({ where: { name: contains }, select, take }),
    db.hostToken.findMany({ where: { host: { name: contains } }, select, take }),
  ]);
  return [text, ...found.flat().map((r) => r.id)];
}

function recordedName(...values: unknown[]): string | null {
  for (const v of values) {
    if (typeof v !== "object" || v === null) continue;
    const o = v as Record<string, unknown>;
    for (const key of ["name", "hostname", "email"]) {
      const name = o[key];
      if (typeof name === "string" && name !== "") return name;
    }
  }
  return null;
}

interface EventRef {
  targetType: string;
  targetId: string;
  poolId: string | null;
  tableVersionId: string | null;
  before: unknown;
  after: unknown;
}

/** Look up the names of one page of events' targets and pools, and their table version numbers. */
export async function targetNames(db: Db, events: readonly EventRef[]) {
  const ids = (type: string) => [
    ...new Set(events.filter((e) => e.targetType === type).map((e) => e.targetId)),
  ];
  const poolIds = [...new Set([...ids("pool"), ...events.flatMap((e) => (e.poolId ? [e.poolId] : []))])];
  const versionIds = [...new Set(events.flatMap((e) => (e.tableVersionId ? [e.tableVersionId] : [])))];
  const [pools, proxies, directors, users, tokens, hosts, hostTokens, findings, versions] = await Promise.all(
    [
      db.pool.findMany({ where: { id: { in: poolIds } }, select: { id: true, name: true } }),
      db.proxy.findMany({ where: { id: { in: ids("proxy") } }, select: { id: true, hostname: true } }),
      db.director.findMany({ where: { id: { in: ids("director") } }, select: { id: true, hostname: true } }),
      db.user.findMany({ where: { id: { in: ids("user") } }, select: { id: true, email: true } }),
      db.apiToken.findMany({ where: { id: { in: ids("token") } }, select: { id: true, name: true } }),
      db.host.findMany({ where: { id: { in: ids("host") } }, select: { id: true, name: true } }),
      db.hostToken.findMany({
        where: { id: { in: ids("host_token") } },
        select: { id: true, host: { select: { name: true } } },
      }),
      db.finding.findMany({ where: { id: { in: ids("finding") } }, select: { id: true, title: true } }),
      db.tableVersion.findMany({ where: { id: { in: versionIds } }, select: { id: true, version: true } }),
    ],
  );
  const byType = new Map<string, Map<string, string>>([
    ["pool", new Map(pools.map((r) => [r.id, r.name]))],
    ["proxy", new Map(proxies.map((r) => [r.id, r.hostname]))],
    ["director", new Map(directors.map((r) => [r.id, r.hostname]))],
    ["user", new Map(users.map((r) => [r.id, r.email]))],
    ["token", new Map(tokens.map((r) => [r.id, r.name]))],
    ["host", new Map(hosts.map((r) => [r.id, r.name]))],
    ["host_token", new Map(hostTokens.map((r) => [r.id, `token of ${r.host.name}`]))],
    ["finding", new Map(findings.map((r) => [r.id, r.title]))],
  ]);
  return {
    pools: byType.get("pool")!,
    versions: new Map(versions.map((r) => [r.id, r.version])),
    target: (e: EventRef): string | null =>
      byType.get(e.targetType)?.get(e.targetId) ?? recordedName(e.before, e.after),
  };
}
