/**
 * The pools list (GET /api/v1/pools, the pools page), kept in this process's memory while the
 * fleet's revision is unchanged. It is the API's most read page, and it changes when an operator
 * or a health verdict changes something, not with each read: one statement per read
 * (poolSummaries) was still most of a read's CPU between the console and PostgreSQL on a 2-core
 * host (issue 28). Each read now costs one tiny statement: the revision, which triggers (migration
 * fleet_revision) raise in the same transaction as any change to pools, binds, proxies, directors,
 * directors' pools or table versions, whoever writes it. The revision is read before the list, so
 * a kept list is never older than its revision (at worst newer, and read again next time): a
 * change is seen by the next read in every console process, this one included, with no
 * notification to wait for.
 */
import type { PoolSummary } from "@tide/contracts";
import { fleetRevision, type Db } from "@tide/db";

export class PoolListCache {
  private kept: { revision: bigint; list: PoolSummary[] } | null = null;

  constructor(
    private readonly revision: () => Promise<bigint | null>,
    private readonly load: () => Promise<PoolSummary[]>,
  ) {}

  /** The pools list: from memory while the revision is the one it was read under, else read. */
  async get(): Promise<PoolSummary[]> {
    const revision = await this.revision();
    if (revision !== null && this.kept?.revision === revision) return this.kept.list;
    const list = await this.load();
    // Reads that overlap may finish out of order: keep the one read under the newest revision.
    if (revision !== null && (this.kept === null || revision >= this.kept.revision)) {
      this.kept = { revision, list: Object.freeze(list) as PoolSummary[] };
    }
    return list;
  }
}

const caches = new WeakMap<Db, PoolListCache>();

/** This process's pools list cache for `db`, read with `load` (fleet.service.ts listPools). */
export function poolListCacheFor(db: Db, load: () => Promise<PoolSummary[]>): PoolListCache {
  let c = caches.get(db);
  if (!c) {
    c = new PoolListCache(() => fleetRevision(db), load);
    caches.set(db, c);
  }
  return c;
}
