import { randomBytes } from "node:crypto";
import { isIP } from "node:net";
import {
  MAX_POOL_BINDS,
  newId,
  poolHealthCheck,
  PoolName,
  TideError,
  type BindInput,
  type PoolHealthCheck,
  type HashField,
  type HashFieldsPreview,
  type PoolDetail,
  type TableVersionSummary,
} from "@tide/contracts";
import { bindSelect, Prisma, proxySelect, type Db, type TableVersionSummaryRow } from "@tide/db";
import { canonicalAddress, diffTables, FLOW_SAMPLE_SIZE, MAX_BACKENDS } from "@tide/forwarding";
import { actorRef, type Actor } from "../../auth/actor";
import { recordAudit } from "../audit/audit.service";
import { bindLabel, describeOverlap, findBindOverlaps, type PlacedBind } from "./bind-overlap.plan";
import { bindChangeRefusal } from "../transitions/change-safety.plan";
import { predictBindChange } from "../transitions/change-safety.service";
import { lockDirectorsAndCheckBinds } from "../fleet/director.service";
import { getPool, toVersionSummary } from "../fleet/fleet.service";
import { parseHashFields } from "./hash-fields";
import { lockPool, TRANSACTION_OPTIONS } from "../fleet/pool-lock";
import { servingOf } from "../transitions/proxy-transition.service";
import { currentTableOf, insertCurrentTableVersion, insertTableVersion, isBuildable } from "./table.service";

/** Who changes a pool: a user or token, or the system (seed, tests). */
export type PoolActor = Actor | { actorKind: "system"; actorId: null; actorLabel: string };

function refOf(actor: PoolActor) {
  return "kind" in actor ? actorRef(actor) : actor;
}

/** A TideError whose `details.fields` names the input field at fault (the console shows it there). */
function fieldError(
  code: "bad_request" | "unprocessable" | "conflict",
  field: string,
  message: string,
  extra: Record<string, unknown> = {},
): TideError {
  return new TideError(code, message, { ...extra, fields: { [field]: message } });
}

export interface NewPoolInput {
  name: string;
  description?: string | undefined;
  hashFields?: HashField[] | undefined;
  binds: BindInput[];
  /**
   * Initial proxies (seed and tests) join active: a new pool has no connections to protect yet.
   * Through the API a pool starts empty and proxies are added one by one (proxy-lifecycle.service).
   */
  proxies?: { address: string; hostname: string }[] | undefined;
  directorIds?: string[] | undefined;
}

/**
 * Validate and canonicalise one bind. `field` (e.g. "binds[1]") names it in the error's
 * `details.fields`, so the console can mark the exact input.
 */
export function parseBind(b: BindInput, field = "binds[0]") {
  const [addr, prefixText] = b.address.split("/");
  const family = isIP(addr ?? "");
  if (!addr || family === 0 || b.address.split("/").length > 2) {
    throw fieldError(
      "bad_request",
      `${field}.address`,
      `Bind address "${b.address}" is not an IP address or CIDR.`,
    );
  }
  const max = family === 4 ? 32 : 128;
  const prefixBits = prefixText === undefined ? max : Number(prefixText);
  if (
    !Number.isInteger(prefixBits) ||
    prefixBits < 0 ||
    prefixBits > max ||
    (prefixText !== undefined && !/^\d+$/.test(prefixText))
  ) {
    throw fieldError("bad_request", `${field}.address`, `Bind "${b.address}": prefix must be 0..${max}.`);
  }
  const portEnd = b.portEnd ?? b.portStart;
  if (!Number.isInteger(b.portStart) || b.portStart < 0 || b.portStart > 65535) {
    throw fieldError("bad_request", `${field}.portStart`, `Bind "${b.address}": port must be 0..65535.`);
  }
  if (!Number.isInteger(portEnd) || portEnd > 65535 || portEnd < b.portStart) {
    throw fieldError(
      "bad_request",
      `${field}.portEnd`,
      `Bind "${b.address}": port range ${b.portStart}-${portEnd} is invalid.`,
    );
  }
  if (b.proto !== "tcp" && b.proto !== "udp") {
    throw fieldError("bad_request", `${field}.proto`, `Bind "${b.address}": protocol must be tcp or udp.`);
  }
  const canonical = canonicalAddress(addr);
  const address = prefixBits === max ? canonical : `${canonical}/${prefixBits}`;
  return { address, prefixBits, proto: b.proto, portStart: b.portStart, portEnd };
}

type ParsedBind = ReturnType<typeof parseBind>;

/**
 * A pool's whole bind list: 1..256 valid binds, none overlapping another (a packet matching two
 * binds of one pool is harmless to the data plane but always an operator's mistake).
 */
function parseBindList(binds: readonly BindInput[], pool: { id: string; name: string }): ParsedBind[] {
  if (binds.length === 0) throw fieldError("bad_request", "binds", "A pool needs at least one bind.");
  if (binds.length > MAX_POOL_BINDS) {
    throw fieldError(
      "unprocessable",
      "binds",
      `A pool holds at most ${MAX_POOL_BINDS} binds (GLBD limit); got ${binds.length}.`,
    );
  }
  const parsed = binds.map((b, i) => parseBind(b, `binds[${i}]`));
  const placed = parsed.map((b) => ({ ...b, poolId: pool.id, poolName: pool.name }));
  const overlap = findBindOverlaps(placed, [])[0];
  if (overlap) {
    const j = placed.indexOf(overlap.b);
    throw fieldError("conflict", `binds[${j}]`, describeOverlap(overlap), {
      binds: [bindLabel(overlap.a), bindLabel(overlap.b)],
    });
  }
  return parsed;
}

function checkName(name: string): void {
  if (!PoolName.safeParse(name).success) {
    throw fieldError(
      "bad_request",
      "name",
      `Pool name "${name}" must be 1-63 lower-case letters, digits and dashes.`,
    );
  }
}

function nameTaken(e: unknown): boolean {
  return e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002";
}

const bindsForAudit = (binds: readonly ParsedBind[]) => binds.map(bindLabel);

/**
 * Create a pool with fresh secrets (hash key and rendezvous seed) and its binds. A table needs a
 * proxy that is not inactive, so a pool created without proxies (the API's way) has no version
 * until its first proxy joins (see createProxy); with initial proxies (seed, tests) they join
 * active and version 1 is written at once. Directors given here are not overlap-checked: only the
 * seed passes them (use assignPool otherwise).
 */
export async function createPool(db: Db, actor: PoolActor, input: NewPoolInput): Promise<PoolDetail> {
  checkName(input.name);
  const poolId = newId("pool");
  const binds = parseBindList(input.binds, { id: poolId, name: input.name });
  const hashFields = parseHashFields(input.hashFields ?? ["src_addr"]);
  const initial = input.proxies ?? [];
  if (initial.length > MAX_BACKENDS) {
    throw fieldError(
      "unprocessable",
      "proxies",
      `A pool holds at most ${MAX_BACKENDS} proxies (the GLBD table format's limit).`,
    );
  }
  initial.forEach((p, i) => {
    if (isIP(p.address) !== 4) {
      throw fieldError("bad_request", `proxies[${i}].address`, `Proxy address "${p.address}" must be IPv4.`);
    }
  });
  const ref = refOf(actor);
  try {
    await db.$transaction(async (tx) => {
      await tx.pool.create({
        data: {
          id: poolId,
          name: input.name,
          description: input.description ?? "",
          hashKey: randomBytes(16),
          seed: randomBytes(16),
          hashFields,
          binds: { create: binds.map((b) => ({ id: newId("bind"), ...b })) },
          proxies: {
            create: initial.map((p, slot) => ({
              id: newId("proxy"),
              address: p.address,
              hostname: p.hostname,
              state: "active" as const,
              slot,
            })),
          },
          directors: input.directorIds ? { connect: input.directorIds.map((id) => ({ id })) } : undefined,
        },
        select: { id: true },
      });
      const proxies = await tx.proxy.findMany({ where: { poolId }, orderBy: { slot: "asc" } });
      const version = isBuildable(proxies)
        ? await insertTableVersion(tx, { poolId, proxies, cause: "pool.create", reason: "", actor: ref })
        : null;
      await recordAudit(tx, {
        ...ref,
        action: "pool.create",
        targetType: "pool",
        targetId: poolId,
        poolId,
        after: {
          name: input.name,
          description: input.description ?? "",
          hashFields,
          binds: bindsForAudit(binds),
          proxies: initial.length,
        },
        tableVersionId: version?.id ?? null,
      });
    }, TRANSACTION_OPTIONS);
  } catch (e) {
    if (nameTaken(e)) {
      throw fieldError("conflict", "name", `A pool named "${input.name}" already exists.`);
    }
    throw e;
  }
  return getPool(db, poolId);
}

/** Rename or re-describe a pool. No table change, so no version. */
export async function updatePool(
  db: Db,
  actor: Actor,
  input: { poolId: string; name?: string | undefined; description?: string | undefined },
): Promise<PoolDetail> {
  if (input.name !== undefined) checkName(input.name);
  try {
    await db.$transaction(async (tx) => {
      await lockPool(tx, input.poolId);
      const before = await tx.pool.findUniqueOrThrow({
        where: { id: input.poolId },
        select: { name: true, description: true },
      });
      const after = {
        name: input.name ?? before.name,
        description: input.description ?? before.description,
      };
      await tx.pool.update({ where: { id: input.poolId }, data: after, select: { id: true } });
      await recordAudit(tx, {
        ...actorRef(actor),
        action: "pool.update",
        targetType: "pool",
        targetId: input.poolId,
        poolId: input.poolId,
        before,
        after,
      });
    }, TRANSACTION_OPTIONS);
  } catch (e) {
    if (nameTaken(e)) throw fieldError("conflict", "name", `A pool named "${input.name}" already exists.`);
    throw e;
  }
  return getPool(db, input.poolId);
}

/**
 * Set how the directors check the pool's proxies. No table version: health changes write their own
 * when the checks say so. Turning checks off leaves each proxy's health as it is (unpin or set it).
 */
export async function setHealthCheck(
  db: Db,
  actor: Actor,
  input: { poolId: string; healthCheck: PoolHealthCheck; reason?: string | undefined },
): Promise<PoolDetail> {
  await db.$transaction(async (tx) => {
    await lockPool(tx, input.poolId);
    const before = await tx.pool.findUniqueOrThrow({
      where: { id: input.poolId },
      select: { healthCheck: true },
    });
    await tx.pool.update({
      where: { id: input.poolId },
      select: { id: true },
      data: { healthCheck: input.healthCheck as unknown as Prisma.InputJsonValue },
    });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "pool.health_check",
      targetType: "pool",
      targetId: input.poolId,
      poolId: input.poolId,
      before: poolHealthCheck(before.healthCheck),
      after: input.healthCheck,
      reason: input.reason ?? "",
    });
  }, TRANSACTION_OPTIONS);
  return getPool(db, input.poolId);
}

export interface PoolChange {
  pool: PoolDetail;
  tableVersion: TableVersionSummary | null;
}

/**
 * The tail of every table-affecting pool change, inside its transaction under the pool lock: the
 * new version from the pool's current proxies, and the audit event that names it.
 */
async function versionAndAudit(
  tx: Prisma.TransactionClient,
  actor: PoolActor,
  change: {
    poolId: string;
    cause: string;
    reason: string | undefined;
    action: string;
    before: Record<string, unknown>;
    after: Record<string, unknown>;
  },
) {
  const reason = change.reason ?? "";
  const v = await insertCurrentTableVersion(tx, change.poolId, change.cause, reason, refOf(actor));
  await recordAudit(tx, {
    ...refOf(actor),
    action: change.action,
    targetType: "pool",
    targetId: change.poolId,
    poolId: change.poolId,
    before: change.before,
    after: { ...change.after, tableVersion: v?.version ?? null },
    reason,
    tableVersionId: v?.id ?? null,
  });
  return v;
}

async function poolChange(
  db: Db,
  poolId: string,
  version: TableVersionSummaryRow | null,
): Promise<PoolChange> {
  return { pool: await getPool(db, poolId), tableVersion: version ? toVersionSummary(version) : null };
}

/**
 * Replace a pool's binds. Rows do not move (they depend on the seed and the proxies only), but
 * the directors must learn the new binds, so a new version is written. Refused when a new bind
 * overlaps a bind of another pool on any director that serves this pool, and (422) when it stops
 * forwarding an address:port the proxies report established connections to, unless a reason is
 * given (GET …/binds/preview says so first).
 */
export async function setBinds(
  db: Db,
  actor: Actor,
  input: { poolId: string; binds: BindInput[]; reason?: string | undefined },
): Promise<PoolChange> {
  const version = await db.$transaction(async (tx) => {
    await lockPool(tx, input.poolId);
    const pool = await tx.pool.findUniqueOrThrow({
      where: { id: input.poolId },
      select: {
        id: true,
        name: true,
        binds: { select: bindSelect, orderBy: { createdAt: "asc" } },
        directors: { select: { id: true }, orderBy: { id: "asc" } },
      },
    });
    const binds = parseBindList(input.binds, pool);
    await lockDirectorsAndCheckBinds(
      tx,
      pool.directors.map((d) => d.id),
      binds.map((b): PlacedBind => ({ ...b, poolId: pool.id, poolName: pool.name })),
    );
    // Removing or narrowing a bind stops the directors forwarding it: refused without a reason
    // when the proxies report connections to what stops (change-safety.plan.ts).
    const safety = await predictBindChange(tx, tx, { poolId: pool.id, before: pool.binds, after: binds });
    if (!input.reason?.trim()) {
      const refusal = bindChangeRefusal(safety, pool.name);
      if (refusal) throw refusal;
    }
    await tx.bind.deleteMany({ where: { poolId: pool.id } });
    // createdAt orders binds in replies; stamp them a millisecond apart to keep the given order.
    const now = Date.now();
    await tx.bind.createMany({
      data: binds.map((b, i) => ({ id: newId("bind"), poolId: pool.id, ...b, createdAt: new Date(now + i) })),
    });
    return versionAndAudit(tx, actor, {
      poolId: pool.id,
      cause: "binds",
      reason: input.reason,
      action: "pool.binds",
      before: { binds: pool.binds.map(bindLabel) },
      after: {
        binds: bindsForAudit(binds),
        // Connections predicted to break (null: a proxy it cuts sent no fresh report).
        brokenPredicted: safety.breaks === null ? null : safety.broken,
      },
    });
  }, TRANSACTION_OPTIONS);
  return poolChange(db, input.poolId, version);
}

/**
 * Whether a hash-field change on this pool must migrate: something may be serving it (a director
 * assigned and a table version to serve). A pool nothing serves has no connection to keep.
 */
async function mustMigrate(tx: Prisma.TransactionClient | Db, poolId: string): Promise<boolean> {
  const [{ served }, versions] = await Promise.all([
    servingOf(tx, poolId),
    tx.tableVersion.count({ where: { poolId } }),
  ]);
  return served && versions > 0;
}

/** The refusal of a hash-field change while another one migrates (the director holds one alt set). */
function migrationInProgress(pool: { name: string; hashFields: string[]; altHashFields: string[] }) {
  return (
    `Pool "${pool.name}" is still migrating from ${pool.altHashFields.join("+")} to ` +
    `${pool.hashFields.join("+")}: established flows reach their old proxies through the old fields. ` +
    `Finish that migration first (pool settings, or POST /api/v1/pools/{poolId}/hash-fields/migration/finish).`
  );
}

/**
 * Replace a pool's hash fields. The table's rows stay, but the same flow now hashes to another
 * row, so most flows change proxy (GET …/hash-fields/preview says how many). On a pool that may be
 * serving, the change migrates the GLB way: the new tables carry the old fields as alt_hash_fields,
 * so the director adds the old row's proxies as extra hops and an established flow still reaches
 * the proxy that holds it (tide-redirect's second chance); new flows go by the new fields.
 * finishHashMigration drops the old fields. One migration at a time (one alt set per table).
 */
export async function setHashFields(
  db: Db,
  actor: Actor,
  input: { poolId: string; hashFields: readonly string[]; reason?: string | undefined },
): Promise<PoolChange> {
  const hashFields = parseHashFields(input.hashFields);
  const version = await db.$transaction(async (tx) => {
    await lockPool(tx, input.poolId);
    const before = await tx.pool.findUniqueOrThrow({
      where: { id: input.poolId },
      select: { name: true, hashFields: true, altHashFields: true },
    });
    if (before.altHashFields.length > 0) {
      throw fieldError("conflict", "hashFields", migrationInProgress(before), {
        migrating: { from: before.altHashFields, to: before.hashFields },
      });
    }
    if (before.hashFields.join(",") === hashFields.join(",")) {
      throw fieldError(
        "conflict",
        "hashFields",
        `Pool ${input.poolId} already hashes on ${hashFields.join(", ")}.`,
      );
    }
    const migrate = await mustMigrate(tx, input.poolId);
    await tx.pool.update({
      where: { id: input.poolId },
      select: { id: true },
      data: migrate
        ? { hashFields, altHashFields: before.hashFields, hashMigrationStartedAt: new Date() }
        : { hashFields },
    });
    return versionAndAudit(tx, actor, {
      poolId: input.poolId,
      cause:
        `hash fields: ${before.hashFields.join("+")} -> ${hashFields.join("+")}` +
        (migrate
          ? ` (migrating: established flows reach their old proxy by ${before.hashFields.join("+")})`
          : ""),
      reason: input.reason,
      action: "pool.hash_fields",
      before: { hashFields: before.hashFields },
      after: { hashFields, migrating: migrate ? { from: before.hashFields } : null },
    });
  }, TRANSACTION_OPTIONS);
  return poolChange(db, input.poolId, version);
}

/**
 * End a hash-field migration: the tables drop the old fields, so a flow that still reached its
 * proxy only through them is reset (the console shows the pool's alternate-hash traffic first).
 * `auto`: the console finished it because no flow used the old fields (services/hash-migration.ts).
 */
export async function finishHashMigration(
  db: Db,
  actor: PoolActor,
  input: { poolId: string; reason?: string | undefined; expectedStartedAt?: Date | undefined },
): Promise<PoolChange> {
  const version = await db.$transaction(async (tx) => {
    await lockPool(tx, input.poolId);
    const pool = await tx.pool.findUnique({
      where: { id: input.poolId },
      select: { name: true, hashFields: true, altHashFields: true, hashMigrationStartedAt: true },
    });
    if (!pool) throw new TideError("not_found", `Pool ${input.poolId} does not exist.`);
    if (pool.altHashFields.length === 0) {
      throw new TideError(
        "conflict",
        `Pool "${pool.name}" has no hash-field migration in progress (it hashes on ${pool.hashFields.join("+")}).`,
      );
    }
    // The automatic finisher decided on one migration; a newer one is not its to finish.
    if (
      input.expectedStartedAt &&
      pool.hashMigrationStartedAt?.getTime() !== input.expectedStartedAt.getTime()
    ) {
      throw new TideError("conflict", `Pool "${pool.name}" started another migration meanwhile.`);
    }
    await tx.pool.update({
      where: { id: input.poolId },
      select: { id: true },
      data: { altHashFields: [], hashMigrationStartedAt: null },
    });
    const startedAt = pool.hashMigrationStartedAt;
    const seconds = startedAt ? Math.round((Date.now() - startedAt.getTime()) / 1000) : null;
    return versionAndAudit(tx, actor, {
      poolId: input.poolId,
      cause: `hash fields: migration from ${pool.altHashFields.join("+")} finished${seconds === null ? "" : ` after ${seconds} s`}`,
      reason: input.reason,
      action: "pool.finish_hash_migration",
      before: { migrating: { from: pool.altHashFields, to: pool.hashFields, startedAt } },
      after: { hashFields: pool.hashFields, migrating: null },
    });
  }, TRANSACTION_OPTIONS);
  return poolChange(db, input.poolId, version);
}

/**
 * How many flows would change primary proxy with other hash fields: the current version's table
 * diffed against itself hashed on the proposed fields (forwarding's diffTables maps a fixed sample
 * of client flows to the pool's first bind through both). Rows do not change, only which row a
 * flow hashes to. Says whether the change migrates (keeps connections) or would be refused.
 */
export async function previewHashFields(
  db: Db,
  input: { poolId: string; hashFields: string | readonly string[] },
): Promise<HashFieldsPreview> {
  const to = parseHashFields(input.hashFields);
  const pool = await db.pool.findUnique({
    where: { id: input.poolId },
    select: { name: true, hashFields: true, altHashFields: true },
  });
  if (!pool) throw new TideError("not_found", `Pool ${input.poolId} does not exist.`);
  const from = pool.hashFields as HashField[];
  const migrates = await mustMigrate(db, input.poolId);
  const refusal =
    pool.altHashFields.length > 0
      ? migrationInProgress(pool)
      : from.join(",") === to.join(",")
        ? `Pool ${input.poolId} already hashes on ${to.join(", ")}.`
        : null;
  const current = await currentTableOf(db, input.poolId);
  if (!current) {
    return {
      poolId: input.poolId,
      from,
      to,
      tableVersionId: null,
      sampleFlows: 0,
      flowsMoved: 0,
      fractionMoved: null,
      migrates,
      refusal,
    };
  }
  const diff = diffTables({ ...current.table, hashFields: from }, { ...current.table, hashFields: to });
  const moved = diff.flowsMoved ?? { sampled: FLOW_SAMPLE_SIZE, moved: 0, fraction: 0 };
  return {
    poolId: input.poolId,
    from,
    to,
    tableVersionId: current.summary.id,
    sampleFlows: moved.sampled,
    flowsMoved: moved.moved,
    fractionMoved: moved.fraction,
    migrates,
    refusal,
  };
}

/**
 * Delete a pool, its proxies, binds and table versions (the audit log keeps its history). Only
 * when no director serves it: then no packet reaches its proxies through Tide, whatever their
 * states, so nothing needs draining first. Otherwise a conflict naming the directors to unassign.
 */
export async function removePool(
  db: Db,
  actor: Actor,
  input: { poolId: string; reason?: string | undefined },
): Promise<{ removed: { id: string; name: string } }> {
  return db.$transaction(async (tx) => {
    await lockPool(tx, input.poolId);
    const pool = await tx.pool.findUniqueOrThrow({
      where: { id: input.poolId },
      select: {
        id: true,
        name: true,
        hashFields: true,
        binds: { select: bindSelect, orderBy: { createdAt: "asc" } },
        directors: { select: { id: true, hostname: true }, orderBy: { hostname: "asc" } },
        proxies: { select: proxySelect, orderBy: { slot: "asc" } },
      },
    });
    if (pool.directors.length > 0) {
      const names = pool.directors.map((d) => d.hostname);
      throw new TideError(
        "conflict",
        `Pool "${pool.name}" cannot be removed: directors serve it (${pool.directors
          .map((d) => `${d.hostname} ${d.id}`)
          .join(", ")}). Unassign them first (Directors page, or ` +
          `${names.map((n) => `tidectl director unassign ${n} ${pool.name}`).join("; ")}): that stops ` +
          `the pool's traffic and breaks its connections. Drain its proxies first if they still serve ` +
          `clients; then remove the pool.`,
        { directorIds: pool.directors.map((d) => d.id) },
      );
    }
    await tx.proxy.deleteMany({ where: { poolId: pool.id } });
    await tx.pool.delete({ where: { id: pool.id }, select: { id: true } });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "pool.remove",
      targetType: "pool",
      targetId: pool.id,
      poolId: pool.id,
      before: {
        name: pool.name,
        hashFields: pool.hashFields,
        binds: pool.binds.map(bindLabel),
        proxies: pool.proxies.map((p) => `${p.hostname} ${p.address} ${p.state}`),
      },
      reason: input.reason ?? "",
    });
    return { removed: { id: pool.id, name: pool.name } };
  }, TRANSACTION_OPTIONS);
}
