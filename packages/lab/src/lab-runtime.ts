/**
 * What the parts of a Lab handle share: the topology, paths and environment, the state file and
 * its process records. Lab (lab.ts) and its directors (lab-directors.ts) and proxies
 * (lab-proxies.ts) each hold the same LabRuntime; every change to the state is saved at once.
 */
import { type LabEnvironment } from "./env";
import { LabError, isLabError } from "./errors";
import { writeStateFile, type LabPaths, type LabStateFile } from "./lab-files";
import { isAlive, logTail, type LabProcessRecord } from "./lab-process";
import { LAB_POOL } from "./lab-table";
import { runInNamespace, type CommandResult, type RunOptions } from "./host-command";
import { parseNetCounters, type NetCounters } from "./net-counters";
import { namespaceOf, type GlbTopology } from "./topology";

export class LabRuntime {
  constructor(
    readonly topology: GlbTopology,
    readonly paths: LabPaths,
    readonly env: LabEnvironment,
    readonly state: LabStateFile,
  ) {}

  /** What the directors call the lab's table: LAB_POOL, or the console's pool name in console mode. */
  get poolName(): string {
    return this.state.console?.poolName ?? LAB_POOL;
  }

  /** Runs argv inside a node's namespace (client, router, dir1, prx2, or a full namespace name). */
  exec(node: string, argv: readonly string[], options: RunOptions = {}): Promise<CommandResult> {
    return runInNamespace(namespaceOf(this.topology, node), argv, options);
  }

  /** /proc/net/snmp + /proc/net/netstat as seen inside a node's namespace. */
  async netCounters(node: string): Promise<NetCounters> {
    const { stdout } = await this.exec(node, ["cat", "/proc/net/snmp", "/proc/net/netstat"]);
    return parseNetCounters(stdout);
  }

  process(key: string): LabProcessRecord | undefined {
    return this.state.processes.find((p) => p.key === key);
  }

  /** Whether the process recorded under this key runs. */
  running(key: string): boolean {
    const rec = this.process(key);
    return rec !== undefined && isAlive(rec);
  }

  record(rec: LabProcessRecord): LabProcessRecord {
    this.state.processes = [...this.state.processes.filter((p) => p.key !== rec.key), rec];
    this.save();
    return rec;
  }

  forget(key: string): void {
    this.state.processes = this.state.processes.filter((p) => p.key !== key);
    this.save();
  }

  /** The error for a process that did not start: the cause, the end of its log, its argv. */
  startFailure(rec: LabProcessRecord, cause: unknown): LabError {
    const tail = logTail(rec.log);
    const code = isLabError(cause) ? cause.code : "process_exited";
    return new LabError(code, `${rec.key} did not start: ${(cause as Error).message}\n${tail}`, {
      argv: rec.argv,
      log: rec.log,
    });
  }

  save(): void {
    writeStateFile(this.paths.stateFile, this.state);
  }
}
