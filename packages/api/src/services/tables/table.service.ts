import {
  newId,
  TideError,
  type ConnectionImpact,
  type HashField,
  type ProxyState,
  type TableVersionSummary,
} from "@tide/contracts";
import { poolSecretsSelect, type Prisma, proxySelect, tableVersionSummarySelect, type Db } from "@tide/db";
import {
  decodeGlbd,
  diffTables,
  encodeGlbd,
  explainFlow,
  normalizeHashFields,
  tableContentHash,
  type ForwardingTable,
} from "@tide/forwarding";
import { openChangeReport } from "../transitions/change-report.service";
import { destinationRefusal } from "./explain-destination.plan";
import { toVersionSummary } from "../fleet/fleet.service";
import { buildTableForPool } from "./table-builder";

type Tx = Prisma.TransactionClient | Db;

/** A backend as recorded with a table version, in backend-slot order (index = GLBD backend index). */
export interface VersionBackend {
  slot: number;
  proxyId: string;
  address: string;
  hostname: string;
  state: ProxyState;
  healthy: boolean;
}

export interface PoolTable {
  table: ForwardingTable;
  backends: VersionBackend[];
}

export interface BuildProxy {
  id: string;
  address: string;
  hostname: string;
  state: ProxyState;
  healthy: boolean;
}

/**
 * Whether a table can be built from these proxies: row assignment needs at least one proxy in the
 * rotation (not inactive). A pool without one has no table version to serve.
 */
export function isBuildable(proxies: readonly { state: ProxyState }[]): boolean {
  return proxies.some((p) => p.state !== "inactive");
}

/**
 * Every proxy in rotation is unhealthy: the table is built as if all were healthy (GLB's fail open),
 * so health checks alone never empty a pool; a check that fails everywhere is more likely the
 * checker's problem than every proxy's.
 */
export function failsOpen(proxies: readonly { state: ProxyState; healthy: boolean }[]): boolean {
  const inRotation = proxies.filter((p) => p.state !== "inactive");
  return inRotation.length > 0 && inRotation.every((p) => !p.healthy);
}

/** Build the table a pool would serve with these proxy states (nothing is written). */
export async function buildPoolTable(
  db: Tx,
  poolId: string,
  proxies: readonly BuildProxy[],
): Promise<PoolTable & { bytes: Uint8Array; contentHash: string; failOpen: boolean }> {
  const pool = await db.pool.findUnique({
    where: { id: poolId },
    select: {
      ...poolSecretsSelect,
      altHashFields: true,
      binds: {
        select: { address: true, prefixBits: true, proto: true, portStart: true, portEnd: true },
        orderBy: { createdAt: "asc" },
      },
    },
  });
  if (!pool) throw new TideError("not_found", `Pool ${poolId} does not exist.`);
  const failOpen = failsOpen(proxies);
  const table = buildTableForPool(
    {
      hashKey: pool.hashKey,
      seed: pool.seed,
      binds: pool.binds,
      hashFields: normalizeHashFields(pool.hashFields),
      altHashFields: pool.altHashFields.length > 0 ? normalizeHashFields(pool.altHashFields) : [],
    },
    proxies.map((p) => ({ address: p.address, state: p.state, healthy: failOpen || p.healthy })),
  );
  const bytes = encodeGlbd([table]);
  const backends = proxies.map((p, slot) => ({
    slot,
    proxyId: p.id,
    address: p.address,
    hostname: p.hostname,
    state: p.state,
    // As built: a table that fails open serves every proxy as healthy.
    healthy: failOpen || p.healthy,
  }));
  return { table, backends, bytes, contentHash: tableContentHash(bytes), failOpen };
}

/** Write a new immutable version for a pool (inside the caller's transaction, under the pool lock). */
export async function insertTableVersion(
  tx: Tx,
  input: {
    poolId: string;
    proxies: readonly BuildProxy[];
    cause: string;
    reason: string;
    actor: { actorKind: "user" | "token" | "system"; actorId: string | null; actorLabel: string };
    /** What the change's preview predicts for the established connections, kept in its change report. */
    predicted?: ConnectionImpact | null;
  },
) {
  const built = await buildPoolTable(tx, input.poolId, input.proxies);
  const last = await tx.tableVersion.findFirst({
    where: { poolId: input.poolId },
    orderBy: { version: "desc" },
    select: { version: true },
  });
  const version = await tx.tableVersion.create({
    data: {
      id: newId("tableVersion"),
      poolId: input.poolId,
      version: (last?.version ?? 0) + 1,
      contentHash: built.contentHash,
      content: Buffer.from(built.bytes),
      backends: built.backends as unknown as Prisma.InputJsonValue,
      cause: built.failOpen
        ? `${input.cause} (fail open: every proxy in rotation is unhealthy, built as if all were healthy)`
        : input.cause,
      reason: input.reason,
      ...input.actor,
    },
    select: tableVersionSummarySelect,
  });
  await openChangeReport(tx, {
    tableVersionId: version.id,
    poolId: input.poolId,
    predicted: input.predicted ?? null,
  });
  return version;
}

/**
 * Write a version of the pool's state as it is (proxies, binds, hash fields) inside the caller's
 * transaction, which holds the pool lock; or none when no proxy is in rotation (nothing to build).
 */
export async function insertCurrentTableVersion(
  tx: Tx,
  poolId: string,
  cause: string,
  reason: string,
  actor: { actorKind: "user" | "token" | "system"; actorId: string | null; actorLabel: string },
) {
  const proxies = await tx.proxy.findMany({
    where: { poolId },
    select: proxySelect,
    orderBy: { slot: "asc" },
  });
  if (!isBuildable(proxies)) return null;
  return insertTableVersion(tx, { poolId, proxies, cause, reason, actor });
}

async function loadVersion(db: Db, where: Prisma.TableVersionWhereInput) {
  const row = await db.tableVersion.findFirst({
    where,
    orderBy: { version: "desc" },
    select: { ...tableVersionSummarySelect, content: true, backends: true },
  });
  return row;
}

function decodeVersion(row: { id: string; content: Uint8Array; backends: unknown }): PoolTable {
  const tables = decodeGlbd(row.content);
  const table = tables[0];
  if (!table || tables.length !== 1) {
    throw new TideError("internal", `Stored table version ${row.id} does not hold exactly one table.`);
  }
  return { table, backends: row.backends as VersionBackend[] };
}

export async function currentTableOf(db: Db, poolId: string) {
  const row = await loadVersion(db, { poolId });
  return row ? { summary: toVersionSummary(row), ...decodeVersion(row) } : null;
}

export async function listVersions(
  db: Db,
  input: { poolId: string; limit: number; cursor?: string | undefined },
): Promise<{ items: TableVersionSummary[]; nextCursor: string | null }> {
  const rows = await db.tableVersion.findMany({
    where: { poolId: input.poolId },
    select: tableVersionSummarySelect,
    orderBy: { version: "desc" },
    take: input.limit + 1,
    ...(input.cursor ? { cursor: { id: input.cursor }, skip: 1 } : {}),
  });
  const page = rows.slice(0, input.limit);
  return {
    items: page.map(toVersionSummary),
    nextCursor: rows.length > input.limit ? (page[page.length - 1]?.id ?? null) : null,
  };
}

async function versionOrThrow(db: Db, versionId: string) {
  const row = await loadVersion(db, { id: versionId });
  if (!row) throw new TideError("not_found", `Table version ${versionId} does not exist.`);
  return row;
}

export async function getVersion(db: Db, versionId: string) {
  const row = await versionOrThrow(db, versionId);
  return { ...toVersionSummary(row), backends: row.backends as unknown as VersionBackend[] };
}

/** The version's rows for the browser: slot index per row, base64 of 65,536 bytes per column. */
export async function getVersionRows(db: Db, versionId: string) {
  const row = await versionOrThrow(db, versionId);
  const { table, backends } = decodeVersion(row);
  // Slots are < 256 (GLBD limit), so one byte per row.
  const primary = Uint8Array.from(table.primary);
  const secondary = Uint8Array.from(table.secondary);
  return {
    primary: Buffer.from(primary).toString("base64"),
    secondary: Buffer.from(secondary).toString("base64"),
    backends,
  };
}

export interface PoolTableDiff {
  rowsPrimaryChanged: number;
  rowsSecondaryChanged: number;
  rowsChanged: number;
  sample: {
    row: number;
    before: { primary: string; secondary: string };
    after: { primary: string; secondary: string };
  }[];
  shares: {
    address: string;
    hostname: string;
    before: { primary: number; secondary: number };
    after: { primary: number; secondary: number };
  }[];
  hashKeyChanged: boolean;
  hashFields: { before: HashField[]; after: HashField[]; changed: boolean };
  flowsMoved: { sampled: number; moved: number; fraction: number } | null;
  binds: { added: string[]; removed: string[] };
  statusChanges: {
    address: string;
    hostname: string;
    before: { state: ProxyState; healthy: boolean };
    after: { state: ProxyState; healthy: boolean };
    primaryRowsChanged: number;
  }[];
}

const DIFF_SAMPLE_ROWS = 500;

export function diffPoolTables(a: PoolTable, b: PoolTable): PoolTableDiff {
  const d = diffTables(a.table, b.table);
  const hostnames = new Map<string, string>();
  for (const be of [...a.backends, ...b.backends]) hostnames.set(be.address, be.hostname);
  // Union of rows whose primary or secondary changed (both lists are ascending).
  const changed = new Set<number>([...d.primaryChanged.rows, ...d.secondaryChanged.rows]);
  const addr = (t: ForwardingTable, slot: number) => t.backends[slot]?.address ?? "?";
  const sample = [...changed]
    .sort((x, y) => x - y)
    .slice(0, DIFF_SAMPLE_ROWS)
    .map((row) => ({
      row,
      before: {
        primary: addr(a.table, a.table.primary[row]!),
        secondary: addr(a.table, a.table.secondary[row]!),
      },
      after: {
        primary: addr(b.table, b.table.primary[row]!),
        secondary: addr(b.table, b.table.secondary[row]!),
      },
    }));
  const none = { primary: 0, secondary: 0 };
  return {
    rowsPrimaryChanged: d.primaryChanged.count,
    rowsSecondaryChanged: d.secondaryChanged.count,
    rowsChanged: changed.size,
    sample,
    shares: d.proxies.map((s) => ({
      address: s.address,
      hostname: hostnames.get(s.address) ?? "",
      before: s.before ? { primary: s.before.primary, secondary: s.before.secondary } : none,
      after: s.after ? { primary: s.after.primary, secondary: s.after.secondary } : none,
    })),
    hashKeyChanged: d.hashKeyChanged,
    hashFields: d.hashFields,
    flowsMoved: d.flowsMoved,
    binds: d.binds,
    statusChanges: d.statusChanges.map((c) => ({ ...c, hostname: hostnames.get(c.address) ?? "" })),
  };
}

export async function diffVersions(db: Db, fromVersionId: string, toVersionId: string) {
  const [from, to] = await Promise.all([versionOrThrow(db, fromVersionId), versionOrThrow(db, toVersionId)]);
  if (from.poolId !== to.poolId) {
    throw new TideError("bad_request", "Both versions must belong to the same pool.");
  }
  return {
    from: toVersionSummary(from),
    to: toVersionSummary(to),
    diff: diffPoolTables(decodeVersion(from), decodeVersion(to)),
  };
}

export async function explainInVersion(
  db: Db,
  input: {
    versionId: string;
    srcAddr: string;
    srcPort?: number | undefined;
    dstAddr?: string | undefined;
    dstPort?: number | undefined;
  },
) {
  const row = await versionOrThrow(db, input.versionId);
  if (input.dstAddr !== undefined) {
    const pool = await db.pool.findUniqueOrThrow({
      where: { id: row.poolId },
      select: {
        name: true,
        binds: { select: { address: true, prefixBits: true, proto: true, portStart: true, portEnd: true } },
      },
    });
    const refusal = destinationRefusal(pool.name, pool.binds, input.dstAddr, input.dstPort);
    if (refusal) throw new TideError("bad_request", refusal, { fields: { dstAddr: refusal } });
  }
  const { table, backends } = decodeVersion(row);
  // A v3 version carries the fields it was built with; a v2 one (written before tables carried
  // them) is explained with the pool's fields, which is what its directors were configured with.
  const hashFields =
    table.hashFields ??
    ((await db.pool.findUniqueOrThrow({ where: { id: row.poolId }, select: { hashFields: true } }))
      .hashFields as HashField[]);
  let e;
  try {
    e = explainFlow(
      table,
      { srcAddr: input.srcAddr, srcPort: input.srcPort, dstAddr: input.dstAddr, dstPort: input.dstPort },
      hashFields,
    );
  } catch (err) {
    throw new TideError("bad_request", err instanceof Error ? err.message : String(err));
  }
  const who = (address: string) => {
    const b = backends.find((x) => x.address === address);
    return { address, hostname: b?.hostname ?? "", proxyId: b?.proxyId ?? "" };
  };
  return {
    row: e.row,
    digest: e.digest,
    primary: who(e.primary),
    secondary: who(e.secondary),
    outerSourcePort: e.outerSourcePort,
    hashFields,
  };
}

/** The exact GLBD bytes of a version (as stored), for download by runbooks and agents. */
export async function versionContent(db: Db, poolId: string, version: number) {
  const row = await db.tableVersion.findUnique({
    where: { poolId_version: { poolId, version } },
    select: { content: true, contentHash: true, version: true, pool: { select: { name: true } } },
  });
  if (!row) throw new TideError("not_found", `Pool ${poolId} has no table version ${version}.`);
  return row;
}

export async function currentVersionSummary(db: Db, poolId: string): Promise<TableVersionSummary> {
  const row = await db.tableVersion.findFirst({
    where: { poolId },
    orderBy: { version: "desc" },
    select: tableVersionSummarySelect,
  });
  if (!row) throw new TideError("not_found", `Pool ${poolId} has no table version.`);
  return toVersionSummary(row);
}
