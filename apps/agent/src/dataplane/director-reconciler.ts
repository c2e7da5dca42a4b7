import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import type { DesiredState } from "@tide/contracts";
import { backoffMs } from "../console/backoff";
import { directorLoadTable, directorServed, servedHashes, type DirectorServed } from "./data-plane-state";
import { applyDirectorTables, tablesInSync, type ApplyOutcome } from "./director-tables";

type DesiredTable = DesiredState["directorTables"][number];

/** How often the director is checked while it serves what is desired, ms. */
export const RECONCILE_INTERVAL_MS = 1_000;
/**
 * How often while it does not (unreachable, restarting, behind), ms: a restarted director gets the
 * console's tables within this of its control socket coming up, plus one load.
 */
export const RECONCILE_FAST_INTERVAL_MS = 200;

export interface ReconcilerOptions {
  socket: string;
  tableDir: string;
  /** Downloads one pool's file (checked against its hash) into tableDir; returns its path. */
  download(t: DesiredTable): Promise<string>;
  log(line: string): void;
  /** The director's served tables (tests inject; default: `status` over the control socket). */
  served?(socket: string): Promise<DirectorServed>;
  /** load_table (tests inject; default: over the control socket). */
  load?(
    file: string,
    poolNames: string[],
  ): Promise<{ generation: number; tableHashes: Record<string, string> }>;
  intervalMs?: number;
  fastIntervalMs?: number;
}

/** What the reconciler last saw (for /metrics and logs). */
export interface ReconcilerState {
  /** Desired-state revision being enforced, or null before the first one arrived. */
  revision: number | null;
  /** Whether the director served exactly the desired tables at the last check (null: unknown). */
  inSync: boolean | null;
  /** Loads done to repair a difference since start. */
  reloads: number;
  lastError: string | null;
}

const describeServed = (served: Readonly<Record<string, string>>): string => {
  const names = Object.keys(served);
  return names.length === 0 ? "nothing" : names.map((n) => `${n}@${served[n]!.slice(0, 12)}`).join(", ");
};

/**
 * Keeps a director serving the console's desired tables (ARCHITECTURE.md flow 3). Not a one-shot
 * push: every check compares what the director reports serving with what is desired and loads what
 * differs, so a restarted director (which comes back with its own file or none), a load that failed,
 * or a table changed behind the agent's back are all repaired without anyone noticing first. Checks
 * run every second, every 200 ms while the director is unreachable or out of sync, and at once when
 * a new desired state arrives. One check at a time; failed loads back off (1 s doubling to 60 s).
 *
 * An empty desired set is not applied (a director keeps forwarding what it has rather than drop
 * every VIP because a console says nothing); the console shows such pools as extra.
 */
export class DirectorReconciler {
  private desired: { revision: number; tables: DesiredTable[] } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private checking = false;
  private again = false;
  private failures = 0;
  private retryAt = 0;
  private wasReachable: boolean | null = null;
  readonly state: ReconcilerState = { revision: null, inSync: null, reloads: 0, lastError: null };

  constructor(private readonly o: ReconcilerOptions) {}

  start(): void {
    this.running = true;
    this.schedule(0);
  }

  stop(): void {
    this.running = false;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** A new desired state: enforce it from now on, checking at once. */
  setDesired(revision: number, tables: readonly DesiredTable[]): void {
    this.desired = { revision, tables: [...tables] };
    this.state.revision = revision;
    this.failures = 0;
    this.retryAt = 0;
    if (this.running) this.schedule(0);
  }

  /** Resolves after a check that started after this call (tests). */
  async checkNow(): Promise<void> {
    await this.check();
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.check();
    }, ms);
  }

  private async check(): Promise<void> {
    if (this.checking) {
      this.again = true;
      return;
    }
    this.checking = true;
    let next = this.o.intervalMs ?? RECONCILE_INTERVAL_MS;
    try {
      do {
        this.again = false;
        next = await this.reconcileOnce();
      } while (this.again);
    } finally {
      this.checking = false;
      this.schedule(next);
    }
  }

  /** One comparison (and load if needed); returns the delay before the next check, ms. */
  private async reconcileOnce(): Promise<number> {
    const slow = this.o.intervalMs ?? RECONCILE_INTERVAL_MS;
    const fast = this.o.fastIntervalMs ?? RECONCILE_FAST_INTERVAL_MS;
    const desired = this.desired;
    if (desired === null) return slow;
    const served = await (this.o.served ?? directorServed)(this.o.socket);
    if (!served.reachable) {
      if (this.wasReachable !== false)
        this.o.log(`director unreachable (${served.error ?? "no reply"}); checking every ${fast} ms`);
      this.wasReachable = false;
      this.state.inSync = false;
      return fast;
    }
    if (this.wasReachable === false)
      this.o.log(`director reachable again; it serves ${describeServed(served.tableHashes)}`);
    this.wasReachable = true;
    if (desired.tables.length === 0) {
      this.state.inSync = Object.keys(served.tableHashes).length === 0;
      return slow;
    }
    if (tablesInSync(desired.tables, served.tableHashes)) {
      if (this.state.inSync === false)
        this.o.log(`director in sync with desired revision ${desired.revision}`);
      this.state.inSync = true;
      return slow;
    }
    this.state.inSync = false;
    if (Date.now() < this.retryAt) return fast;
    const started = Date.now();
    let outcome: ApplyOutcome;
    try {
      outcome = await applyDirectorTables(desired.tables, served.tableHashes, {
        download: (t) => this.o.download(t),
        load:
          this.o.load ??
          (async (file, poolNames) => {
            const r = await directorLoadTable(this.o.socket, file, poolNames);
            return { generation: r.generation, tableHashes: servedHashes(r.pools) };
          }),
        tableDir: this.o.tableDir,
      });
    } catch (err) {
      this.failures++;
      const wait = backoffMs(this.failures);
      this.retryAt = Date.now() + wait;
      this.state.lastError = err instanceof Error ? err.message : String(err);
      this.o.log(
        `desired revision ${desired.revision}: director serves ${describeServed(served.tableHashes)}; ` +
          `load failed (${this.state.lastError}); retry in ${wait} ms`,
      );
      return fast;
    }
    this.failures = 0;
    this.state.lastError = null;
    if (outcome.kind === "loaded") {
      this.state.reloads++;
      this.state.inSync = true;
      this.o.log(
        `desired revision ${desired.revision}: director served ${describeServed(served.tableHashes)}; ` +
          `now serves ${outcome.poolNames.join(", ")} (generation ${outcome.generation}, ${Date.now() - started} ms)`,
      );
      await this.prune(desired.tables, outcome.file);
    }
    return slow;
  }

  /**
   * The table directory keeps only what the current desired state needs: each pool's file (so a
   * restarted director is repaired without downloading again) and the merged file last loaded.
   */
  private async prune(tables: readonly DesiredTable[], loaded: string): Promise<void> {
    const keep = new Set([path.basename(loaded), ...tables.map((t) => `${t.contentHash}.glbd`)]);
    let names: string[];
    try {
      names = await readdir(this.o.tableDir);
    } catch {
      return;
    }
    for (const name of names) {
      if (keep.has(name) || !/\.glbd(\.tmp-\d+)?$/.test(name)) continue;
      await rm(path.join(this.o.tableDir, name), { force: true }).catch(() => undefined);
    }
  }
}
