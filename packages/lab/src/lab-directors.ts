/**
 * A lab's directors: starting and stopping tide-director, the router's ECMP route for the VIP and
 * the directors' control clients. Lab (lab.ts) hands these methods out under its own names.
 */
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import { type DirectorCounters } from "@tide/contracts";
import { waitForSocket } from "./control-socket";
import { DirectorControl } from "./director-control";
import { LabError } from "./errors";
import { directorLaunch, writeFileAtomic } from "./lab-files";
import { isAlive, respawn, spawnDetached, stopProcess, type LabProcessRecord } from "./lab-process";
import { type LabRuntime } from "./lab-runtime";
import { LAB_POOL } from "./lab-table";
import { runCommand } from "./host-command";
import { DPDK_RUNTIME_DIR } from "./lab-teardown";
import { directorNode, vipRouteArgv } from "./topology";

/** Default sleep of an idle director loop, microseconds: two directors share the lab's 2 CPUs. */
export const DEFAULT_IDLE_SLEEP_US = 100;
const DIRECTOR_START_TIMEOUT_MS = 30_000;

export class LabDirectors {
  private readonly clients = new Map<string, DirectorControl>();

  constructor(private readonly rt: LabRuntime) {}

  /** Director names (dir1, dir2, ...). */
  get names(): string[] {
    return this.rt.topology.directors.map((d) => d.name);
  }

  /** Directors whose process runs. */
  running(): string[] {
    return this.names.filter((name) => this.rt.running(name));
  }

  /** Directors the router's VIP route points at. */
  get ecmp(): string[] {
    return [...this.rt.state.ecmp];
  }

  /** Puts a director into the router's ECMP route for the VIP, or takes it out. */
  async setEcmp(name: string, inEcmp: boolean): Promise<string[]> {
    const { topology, state } = this.rt;
    directorNode(topology, name);
    const next = this.names.filter((d) => (d === name ? inEcmp : state.ecmp.includes(d)));
    await runCommand(vipRouteArgv(topology, next));
    // VIPs added with `lab vip add` go where the lab's own goes.
    for (const v of state.vips ?? []) await runCommand(vipRouteArgv(topology, next, v.cidr));
    state.ecmp = next;
    this.rt.save();
    return [...next];
  }

  /** Starts a director (if not running), waits for its socket, loads the current table. */
  async start(name: string, idleSleepUs?: number): Promise<void> {
    const { topology, paths, env, state } = this.rt;
    const d = directorNode(topology, name);
    const existing = this.rt.process(name);
    if (existing && isAlive(existing)) return;
    if (existing) this.rt.forget(name);
    const idle = idleSleepUs ?? (state.options.idleSleepUs as number | undefined) ?? DEFAULT_IDLE_SLEEP_US;
    const launch = directorLaunch(topology, d, {
      directorBin: env.directorBin,
      directorLauncher: env.directorLauncher,
      paths,
      idleSleepUs: idle,
      runId: `${process.pid.toString(36)}${Date.now().toString(36)}`,
      // Console mode: no table at start; the director's agent loads the console's.
      tableFile: !state.console && existsSync(paths.tableFile) ? paths.tableFile : null,
      poolName: state.console?.poolName,
    });
    writeFileAtomic(paths.directorConfig(name), `${JSON.stringify(launch.config, null, 2)}\n`);
    rmSync(paths.directorSocket(name), { force: true });
    state.dpdkPrefixes.push(launch.filePrefix);
    const rec = this.rt.record(
      spawnDetached({ key: name, kind: "director", node: name, argv: launch.argv, log: paths.log(name) }),
    );
    await this.ready(name, rec);
  }

  /**
   * Restarts a director's recorded process (crashed or not) with the very command it was started
   * with (same configuration file, EAL file prefix and lcore): SIGTERM (SIGKILL after 10 s), then
   * as start(). Its place in the router's ECMP route does not change.
   */
  async restart(name: string): Promise<LabProcessRecord> {
    const old = this.rt.process(name);
    if (!old) throw new LabError("not_running", `${name} has no recorded process (stopped by the lab?)`);
    this.clients.get(name)?.close();
    this.clients.delete(name);
    await stopProcess(old, 10_000);
    // A crashed director leaves its socket: waiting for it must not find the old one.
    rmSync(this.rt.paths.directorSocket(name), { force: true });
    const rec = this.rt.record(respawn(old));
    await this.ready(name, rec);
    return rec;
  }

  /** Waits for a started director's socket, then loads the lab's table (standalone mode). */
  private async ready(name: string, rec: LabProcessRecord): Promise<void> {
    const { paths, state } = this.rt;
    try {
      await waitForSocket(paths.directorSocket(name), DIRECTOR_START_TIMEOUT_MS, () => isAlive(rec));
    } catch (e) {
      throw this.rt.startFailure(rec, e);
    }
    this.clients.get(name)?.close();
    this.clients.delete(name);
    if (state.table) {
      const result = await this.control(name).loadTable(paths.tableFile, [LAB_POOL]);
      const hash = result.pools.find((p) => p.name === LAB_POOL)?.content_hash;
      if (hash !== state.table.hash) {
        throw new LabError(
          "hash_mismatch",
          `${name} serves ${hash ?? "no table"}, expected ${state.table.hash}`,
        );
      }
    }
  }

  /**
   * Stops a director (SIGTERM; it removes its socket). The router still sends it its share of
   * flows unless setEcmp(name, false) took it out: that is the "director died" case.
   */
  async stop(name: string): Promise<void> {
    const { topology, state } = this.rt;
    directorNode(topology, name);
    this.clients.get(name)?.close();
    this.clients.delete(name);
    const rec = this.rt.process(name);
    if (!rec) return;
    await stopProcess(rec, 10_000);
    this.rt.forget(name);
    const prefix = state.dpdkPrefixes.find((p) => p.startsWith(`${topology.prefix}-${name}-`));
    if (prefix) {
      rmSync(path.join(DPDK_RUNTIME_DIR, prefix), { recursive: true, force: true });
      state.dpdkPrefixes = state.dpdkPrefixes.filter((p) => p !== prefix);
      this.rt.save();
    }
  }

  /** Typed control client of a director (one connection, reused; contract-validated replies). */
  control(name: string): DirectorControl {
    directorNode(this.rt.topology, name);
    let c = this.clients.get(name);
    if (!c) {
      c = new DirectorControl(name, this.rt.paths.directorSocket(name));
      this.clients.set(name, c);
    }
    return c;
  }

  /** Counters of every running director (what reached the proxies in total). */
  async totals(): Promise<Record<string, DirectorCounters>> {
    const out: Record<string, DirectorCounters> = {};
    for (const name of this.running()) out[name] = (await this.control(name).stats()).totals;
    return out;
  }

  /** The content hash each running director reports for the lab's pool (null: none loaded). */
  async tableHashes(): Promise<Record<string, string | null>> {
    const out: Record<string, string | null> = {};
    for (const name of this.running()) {
      const status = await this.control(name).status();
      out[name] = status.pools.find((p) => p.name === this.rt.poolName)?.content_hash ?? null;
    }
    return out;
  }

  /** Closes the control connections; the directors keep running. */
  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}
