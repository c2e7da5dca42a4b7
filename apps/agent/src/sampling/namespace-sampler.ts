import { readFileSync } from "node:fs";
import { access, constants, readFile, readlink } from "node:fs/promises";
import type { CpuObservation, NamespaceObservation, NamespaceSysctls } from "@tide/contracts";
import { parseProcNetCounters, parseSockstat } from "../kernel/counters";
import { listenPortCounts, MAX_LISTENERS, parseSsListeners } from "../kernel/listeners";
import { cpuObservations, parseSoftirqsNetRx, parseSoftnetStat } from "../kernel/softnet";
import { parseSysctlLines, parseSysctls, SYSCTL_PATHS } from "../kernel/sysctls";
import { discoverNamespaces, parseNetnsLink, type DiscoveredNamespace } from "../namespaces/discovery";
import { NamespaceHelper } from "../namespaces/helper-shell";
import { NsdiagClient, type NsdiagNamespace, type NsdiagState } from "../namespaces/nsdiag-client";
import { parseSsEstablished, splitSsStates } from "./established";

const SS_MARK = "__TIDE_SS__";

/** Pause before entering a namespace again after its helper failed, in ms. */
export const HELPER_RETRY_MS = 10_000;

/**
 * One ss for LISTEN and ESTABLISHED sockets: the state column comes first (LISTEN or ESTAB), which
 * splitSsStates sorts out.
 */
const SS_COMMAND = "ss -Htn state listening state established 2>/dev/null";

/**
 * The script one helper runs per tick: sysctls with `grep -H .` (prints "path:value" per file; a shell
 * `read` would not do: it reads one byte at a time and /proc/sys returns EOF for any read past
 * offset 0), then ss. /proc/sys shows the reader's namespace, so both must run inside it:
 * two forks per tick and namespace, no nsenter.
 */
export const TICK_SCRIPT = [
  `cd /proc/sys && grep -H . ${Object.values(SYSCTL_PATHS).join(" ")} 2>/dev/null`,
  `echo ${SS_MARK}`,
  SS_COMMAND,
].join("\n");

/** The script on ticks whose sysctls come from the cache: `ss` only (one fork instead of two). */
export const TICK_SCRIPT_SS_ONLY = [`echo ${SS_MARK}`, SS_COMMAND].join("\n");

/** How long sysctls read in a namespace are reused, in ms: they rarely change; forks cost CPU. */
export const SYSCTL_REFRESH_MS = 10_000;

/** Split a helper's reply into the sysctl and ss parts. */
export function splitTickOutput(text: string): { sysctls: string; ss: string } {
  const at = text.indexOf(SS_MARK + "\n");
  if (at < 0) return { sysctls: text, ss: "" };
  return { sysctls: text.slice(0, at), ss: text.slice(at + SS_MARK.length + 1) };
}

async function readText(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch {
    return null;
  }
}

/**
 * How namespaces are sampled: "nsdiag" = one tide-nsdiag process for all of them (inet_diag and
 * kept /proc fds, no fork per tick); "shell" = one shell per namespace running ss every tick, used
 * only when tide-nsdiag is not configured or not executable (reason says which).
 */
export interface CollectorState {
  path: "nsdiag" | "shell" | "undecided";
  reason: string | null;
  nsdiag: NsdiagState | null;
}

function readTextSync(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

export interface HostSample {
  namespaces: NamespaceObservation[];
  cpus: CpuObservation[];
  /** Namespaces that could not be sampled this tick, with the reason. */
  errors: { inode: number; error: string }[];
}

/**
 * Samples every network namespace of the host each tick. With tide-nsdiag (options.nsdiagBinary),
 * one request per tick covers every namespace: listeners, sysctls and counter files all come back
 * in one JSON line. Without it (fallback), one helper shell per namespace lives as long as the
 * namespace and runs ss every tick; counter files are read by the agent itself through
 * /proc/<helper pid>/net/* (the helper is inside the namespace). Either way, resources of
 * namespaces that disappeared are released.
 */
export class HostSampler {
  private readonly helpers = new Map<number, NamespaceHelper>();
  private ownInode: number | null = null;
  /** Last sysctls read per namespace, and when (ms since epoch). */
  private readonly sysctlCache = new Map<number, { sysctls: NamespaceSysctls; readAt: number }>();
  /** Namespaces whose helper failed, and when to try again (ms since epoch): no fork storm. */
  private readonly retryAt = new Map<number, number>();

  constructor(
    private readonly options: {
      procDir?: string;
      netnsDir?: string;
      /** Sysctl cache lifetime, ms (default SYSCTL_REFRESH_MS; 0 = read them every tick). */
      sysctlRefreshMs?: number;
      /** tide-nsdiag path; null/absent = the shell fallback. */
      nsdiagBinary?: string | null;
      /**
       * Names of the only namespaces to sample (/run/netns names); null/absent = every namespace.
       * Several "hosts" of a lab share one kernel: each agent samples its own.
       */
      namespaces?: readonly string[] | null;
      log?: (line: string) => void;
    } = {},
  ) {}

  private nsdiag: NsdiagClient | null = null;
  private collector: CollectorState = { path: "undecided", reason: null, nsdiag: null };

  /** Which path samples namespaces and, for tide-nsdiag, its process state. */
  collectorState(): CollectorState {
    return { ...this.collector, nsdiag: this.nsdiag?.state ?? null };
  }

  /** Pick tide-nsdiag when it is configured and executable (decided once, like tide-probes). */
  private async chooseCollector(): Promise<void> {
    if (this.collector.path !== "undecided") return;
    const binary = this.options.nsdiagBinary ?? null;
    if (binary === null) {
      this.collector = { path: "shell", reason: "no nsdiagBinary configured", nsdiag: null };
      return;
    }
    try {
      await access(binary, constants.X_OK);
    } catch {
      this.collector = { path: "shell", reason: `${binary} not found or not executable`, nsdiag: null };
      this.options.log?.(`tide-nsdiag ${binary} not found or not executable: sampling with ss per namespace`);
      return;
    }
    this.nsdiag = new NsdiagClient(binary, this.options.log);
    this.collector = { path: "nsdiag", reason: null, nsdiag: null };
  }

  /** Pids of the helper shells and tide-nsdiag (excluded from discovery). */
  helperPids(): Set<number> {
    const pids = new Set<number>();
    for (const h of this.helpers.values()) if (h.pid !== null) pids.add(h.pid);
    const nsdiagPid = this.nsdiag?.pid ?? null;
    if (nsdiagPid !== null) pids.add(nsdiagPid);
    return pids;
  }

  get helperCount(): number {
    return this.helpers.size;
  }

  async sample(): Promise<HostSample> {
    const procDir = this.options.procDir ?? "/proc";
    if (this.ownInode === null) {
      this.ownInode = parseNetnsLink(await readlink(`${procDir}/self/ns/net`).catch(() => "")) ?? -1;
    }
    await this.chooseCollector();
    const only = this.options.namespaces ?? null;
    const found = (await discoverNamespaces({ ...this.options, excludePids: this.helperPids() })).filter(
      (ns) => only === null || (ns.name !== null && only.includes(ns.name)),
    );
    const alive = new Set(found.map((n) => n.inode));
    for (const [inode, helper] of this.helpers) {
      if (!alive.has(inode)) {
        helper.stop();
        this.helpers.delete(inode);
      }
    }
    for (const inode of this.sysctlCache.keys()) if (!alive.has(inode)) this.sysctlCache.delete(inode);
    this.sysctlAges.clear();
    for (const inode of this.retryAt.keys()) if (!alive.has(inode)) this.retryAt.delete(inode);
    const errors: HostSample["errors"] = [];
    const now = Date.now();
    const results =
      this.nsdiag !== null
        ? await this.sampleWithNsdiag(this.nsdiag, found, errors)
        : await Promise.all(
            found
              .filter((ns) => (this.retryAt.get(ns.inode) ?? 0) <= now)
              .map((ns) =>
                this.sampleNamespace(ns).then(
                  (r) => {
                    this.retryAt.delete(ns.inode);
                    return r;
                  },
                  (err: unknown) => {
                    errors.push({ inode: ns.inode, error: err instanceof Error ? err.message : String(err) });
                    this.retryAt.set(ns.inode, Date.now() + HELPER_RETRY_MS);
                    return null;
                  },
                ),
              ),
          );
    const namespaces = results.filter((r): r is NamespaceObservation => r !== null);
    // Two small /proc files: inline reads cost less CPU than two threadpool round trips each.
    const softnet = readTextSync(`${procDir}/net/softnet_stat`);
    const softirqs = readTextSync(`${procDir}/softirqs`);
    const cpus = cpuObservations(parseSoftnetStat(softnet ?? ""), parseSoftirqsNetRx(softirqs ?? ""));
    return { namespaces, cpus, errors };
  }

  /** Every namespace in one tide-nsdiag request; a failed request is an error for each namespace. */
  private async sampleWithNsdiag(
    client: NsdiagClient,
    found: readonly DiscoveredNamespace[],
    errors: HostSample["errors"],
  ): Promise<(NamespaceObservation | null)[]> {
    const now = Date.now();
    const refreshMs = this.options.sysctlRefreshMs ?? SYSCTL_REFRESH_MS;
    const isFresh = (inode: number): boolean => {
      const c = this.sysctlCache.get(inode);
      return c !== undefined && now - c.readAt < refreshMs && now >= c.readAt;
    };
    // Sysctls cost a pread each: when one namespace needs them, read them everywhere.
    const readSysctls = found.some((ns) => !isFresh(ns.inode));
    let replies: NsdiagNamespace[];
    try {
      replies = await client.request(
        found.map((ns) => ({ inode: ns.inode, path: ns.inode === this.ownInode ? null : ns.path })),
        readSysctls,
      );
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      for (const ns of found) errors.push({ inode: ns.inode, error });
      return [];
    }
    const byInode = new Map(replies.map((r) => [r.inode, r]));
    return found.map((ns) => {
      const r = byInode.get(ns.inode);
      if (r === undefined || r.state !== "ok") {
        errors.push({ inode: ns.inode, error: r === undefined ? "missing in tide-nsdiag reply" : r.error });
        return null;
      }
      let values: NamespaceSysctls;
      const cached = this.sysctlCache.get(ns.inode);
      if (r.sysctls !== null) {
        values = parseSysctls(r.sysctls);
        this.sysctlCache.set(ns.inode, { sysctls: values, readAt: now });
        this.sysctlAges.set(ns.inode, 0);
      } else if (cached !== undefined) {
        values = cached.sysctls;
        this.sysctlAges.set(ns.inode, now - cached.readAt);
      } else {
        values = parseSysctls(new Map());
      }
      const counters = parseProcNetCounters(r.netstat ?? "");
      parseProcNetCounters(r.snmp ?? "", counters);
      return {
        netns: { inode: ns.inode, name: ns.name, root: ns.root },
        pids: ns.pids,
        counters,
        sockstat: parseSockstat(r.sockstat ?? ""),
        sysctls: values,
        listeners: r.listeners
          .slice(0, MAX_LISTENERS)
          .map(([address, port, recvQ, sendQ]) => ({ address, port, recvQ, sendQ, requestedBacklog: null })),
        listenPorts: r.ports.map(([port, sockets]) => ({ port, sockets })),
        ...(r.established !== null && r.establishedTotal !== null
          ? {
              established: r.established.map(([address, port, count]) => ({ address, port, count })),
              establishedTotal: r.establishedTotal,
            }
          : {}),
      };
    });
  }

  private helperFor(ns: DiscoveredNamespace): NamespaceHelper {
    let helper = this.helpers.get(ns.inode);
    if (helper === undefined) {
      helper = new NamespaceHelper(ns.inode === this.ownInode ? null : ns.path);
      this.helpers.set(ns.inode, helper);
    }
    return helper;
  }

  private async sampleNamespace(ns: DiscoveredNamespace): Promise<NamespaceObservation> {
    const procDir = this.options.procDir ?? "/proc";
    const helper = this.helperFor(ns);
    const cached = this.sysctlCache.get(ns.inode);
    const now = Date.now();
    const fresh =
      cached !== undefined &&
      now - cached.readAt < (this.options.sysctlRefreshMs ?? SYSCTL_REFRESH_MS) &&
      now >= cached.readAt;
    const output = await helper.run(fresh ? TICK_SCRIPT_SS_ONLY : TICK_SCRIPT);
    const pid = helper.pid;
    if (pid === null) throw new Error("namespace helper is not running");
    // Check the helper really is in this namespace (a recycled /proc/PID path could point elsewhere).
    const inode = parseNetnsLink(await readlink(`${procDir}/${pid}/ns/net`).catch(() => ""));
    if (inode !== ns.inode) {
      helper.stop();
      this.helpers.delete(ns.inode);
      throw new Error(`helper entered namespace ${inode ?? "?"} instead of ${ns.inode}`);
    }
    const [netstat, snmp, sockstat] = await Promise.all([
      readText(`${procDir}/${pid}/net/netstat`),
      readText(`${procDir}/${pid}/net/snmp`),
      readText(`${procDir}/${pid}/net/sockstat`),
    ]);
    const counters = parseProcNetCounters(netstat ?? "");
    parseProcNetCounters(snmp ?? "", counters);
    const { sysctls, ss } = splitTickOutput(output);
    let values: NamespaceSysctls;
    let sysctlsAgeMs = 0;
    if (fresh) {
      values = cached.sysctls;
      sysctlsAgeMs = now - cached.readAt;
    } else {
      values = parseSysctls(parseSysctlLines(sysctls));
      this.sysctlCache.set(ns.inode, { sysctls: values, readAt: now });
    }
    this.sysctlAges.set(ns.inode, sysctlsAgeMs);
    const states = splitSsStates(ss);
    const all = parseSsListeners(states.listening);
    return {
      netns: { inode: ns.inode, name: ns.name, root: ns.root },
      pids: ns.pids,
      counters,
      sockstat: parseSockstat(sockstat ?? ""),
      sysctls: values,
      listeners: all.slice(0, MAX_LISTENERS),
      listenPorts: listenPortCounts(all),
      ...parseSsEstablished(states.established),
    };
  }

  /**
   * Age of the sysctls reported per namespace inode in the last sample, ms (0 = read this tick).
   * The Observation contract has no field for it (strict schema); /metrics exposes it.
   */
  readonly sysctlAges = new Map<number, number>();

  /** Forget cached sysctls (next tick reads them again in every namespace). */
  invalidateSysctls(): void {
    this.sysctlCache.clear();
  }

  /** Kill every helper and tide-nsdiag. */
  close(): void {
    for (const h of this.helpers.values()) h.stop();
    this.helpers.clear();
    this.nsdiag?.stop();
    this.nsdiag = null;
    this.collector = { path: "undecided", reason: null, nsdiag: null }; // a later sample() starts again
  }
}
