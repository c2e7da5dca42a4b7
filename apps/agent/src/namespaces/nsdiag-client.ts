import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { ESTABLISHED_MAX_ENDPOINTS } from "@tide/contracts";

/** How long one tide-nsdiag request may take before the process is killed and restarted, in ms. */
export const NSDIAG_TIMEOUT_MS = 5_000;
/** Restart delays after tide-nsdiag died: doubling from the first to the last, in ms. */
export const NSDIAG_RESTART_MIN_MS = 1_000;
export const NSDIAG_RESTART_MAX_MS = 30_000;

/** One namespace to sample: path null = tide-nsdiag's own namespace (the agent's). */
export interface NsdiagTarget {
  inode: number;
  path: string | null;
}

/** One namespace in a tide-nsdiag reply (dataplane/nsdiag/tide_nsdiag.c documents the format). */
export type NsdiagNamespace =
  | {
      inode: number;
      state: "ok";
      /** [address, port, accept queue (Recv-Q), effective backlog (Send-Q)], at most 4096. */
      listeners: [string, number, number, number][];
      listenersTotal: number;
      /** [port, LISTEN sockets], complete. */
      ports: [number, number][];
      /**
       * [local address, local port, ESTABLISHED sockets], the 256 busiest by count; null from a
       * tide-nsdiag that does not report them (older build).
       */
      established: [string, number, number][] | null;
      /** Every ESTABLISHED socket of the namespace; null from an older tide-nsdiag. */
      establishedTotal: number | null;
      /** Raw sysctl texts keyed by path under /proc/sys; absent when not asked for. */
      sysctls: Map<string, string> | null;
      netstat: string | null;
      snmp: string | null;
      sockstat: string | null;
    }
  | { inode: number; state: "gone" | "error"; error: string };

/** What /metrics reports about tide-nsdiag. */
export interface NsdiagState {
  state: "not_started" | "running" | "restarting" | "stopped";
  pid: number | null;
  restarts: number;
  lastError: string | null;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const nat = (v: unknown): number => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : 0);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** Check one namespace entry of a reply (tide-nsdiag is ours, but a bad line must not crash the agent). */
export function parseNsdiagNamespace(v: unknown): NsdiagNamespace | null {
  if (!isObj(v) || nat(v.inode) < 1) return null;
  const inode = nat(v.inode);
  if (v.state !== "ok") {
    const state = v.state === "gone" ? "gone" : "error";
    return { inode, state, error: (str(v.error) ?? "tide-nsdiag: unknown error").slice(0, 1000) };
  }
  const listeners: [string, number, number, number][] = [];
  for (const l of Array.isArray(v.listeners) ? (v.listeners as unknown[]) : []) {
    if (!Array.isArray(l) || typeof l[0] !== "string" || l[0] === "" || nat(l[1]) > 65535) continue;
    listeners.push([l[0].slice(0, 64), nat(l[1]), nat(l[2]), nat(l[3])]);
  }
  const ports: [number, number][] = [];
  for (const p of Array.isArray(v.ports) ? (v.ports as unknown[]) : []) {
    if (Array.isArray(p) && nat(p[0]) <= 65535) ports.push([nat(p[0]), nat(p[1])]);
  }
  let established: [string, number, number][] | null = null;
  if (Array.isArray(v.established)) {
    established = [];
    for (const e of v.established as unknown[]) {
      if (!Array.isArray(e) || typeof e[0] !== "string" || e[0] === "" || e[0].length > 45) continue;
      if (nat(e[1]) > 65535 || established.length >= ESTABLISHED_MAX_ENDPOINTS) continue;
      established.push([e[0], nat(e[1]), nat(e[2])]);
    }
  }
  let sysctls: Map<string, string> | null = null;
  if (isObj(v.sysctls)) {
    sysctls = new Map();
    for (const [k, text] of Object.entries(v.sysctls)) if (typeof text === "string") sysctls.set(k, text);
  }
  return {
    inode,
    state: "ok",
    listeners,
    listenersTotal: nat(v.listeners_total),
    ports,
    established,
    establishedTotal: typeof v.established_total === "number" ? nat(v.established_total) : null,
    sysctls,
    netstat: str(v.netstat),
    snmp: str(v.snmp),
    sockstat: str(v.sockstat),
  };
}

/**
 * The one tide-nsdiag process of the agent (dataplane/nsdiag): started on the first request, asked
 * once per tick for every namespace, restarted with a doubling pause when it dies or hangs (requests
 * fail meanwhile, with the reason).
 */
export class NsdiagClient {
  private child: ChildProcessWithoutNullStreams | null = null;
  private buffer = "";
  private seq = 0;
  private readonly pending = new Map<
    number,
    { resolve: (ns: NsdiagNamespace[]) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }
  >();
  private restartTimer: NodeJS.Timeout | null = null;
  private restartDelayMs = NSDIAG_RESTART_MIN_MS;
  private stopped = false;
  private stderrTail = "";
  private readonly status: NsdiagState = { state: "not_started", pid: null, restarts: 0, lastError: null };

  constructor(
    readonly binary: string,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  get state(): NsdiagState {
    return { ...this.status, pid: this.child?.pid ?? null };
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  private start(): ChildProcessWithoutNullStreams {
    const child = spawn(this.binary, [], { stdio: ["pipe", "pipe", "pipe"], env: { LC_ALL: "C" } });
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => this.onData(chunk));
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-500);
    });
    child.stdin.on("error", () => undefined);
    child.on("error", (err) => this.onExit(child, `tide-nsdiag: ${err.message}`));
    child.on("exit", (code, signal) =>
      this.onExit(child, `tide-nsdiag exited (${signal ?? code ?? "?"}) ${this.stderrTail.trim()}`.trim()),
    );
    this.child = child;
    this.buffer = "";
    this.stderrTail = "";
    this.status.state = "running";
    return child;
  }

  private onExit(child: ChildProcessWithoutNullStreams, why: string): void {
    if (this.child !== child) return;
    this.child = null;
    child.kill("SIGKILL");
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.reject(new Error(why));
    }
    if (this.stopped) return;
    this.status.lastError = why.slice(0, 1000);
    this.status.state = "restarting";
    this.status.restarts++;
    this.log(`${why}; restarting in ${this.restartDelayMs} ms`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (!this.stopped && this.child === null) this.start();
    }, this.restartDelayMs);
    this.restartTimer.unref();
    this.restartDelayMs = Math.min(this.restartDelayMs * 2, NSDIAG_RESTART_MAX_MS);
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      this.onLine(line);
    }
  }

  private onLine(line: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return; // not ours to understand; the request times out if its reply is lost
    }
    if (!isObj(parsed) || typeof parsed.id !== "number") return; // hello, or an error without id
    const p = this.pending.get(parsed.id);
    if (p === undefined) return;
    this.pending.delete(parsed.id);
    clearTimeout(p.timer);
    if (typeof parsed.error === "string") {
      p.reject(new Error(`tide-nsdiag: ${parsed.error}`));
      return;
    }
    this.restartDelayMs = NSDIAG_RESTART_MIN_MS; // it works again
    this.status.lastError = null;
    const ns = Array.isArray(parsed.ns) ? parsed.ns : [];
    p.resolve(ns.map(parseNsdiagNamespace).filter((n): n is NsdiagNamespace => n !== null));
  }

  /** Sample these namespaces (tide-nsdiag closes any it holds that are not listed). */
  request(
    targets: readonly NsdiagTarget[],
    sysctls: boolean,
    timeoutMs = NSDIAG_TIMEOUT_MS,
  ): Promise<NsdiagNamespace[]> {
    if (this.stopped) return Promise.reject(new Error("tide-nsdiag stopped"));
    if (this.child === null && this.restartTimer !== null)
      return Promise.reject(new Error(`tide-nsdiag restarting: ${this.status.lastError ?? "?"}`));
    const child = this.child ?? this.start();
    const id = ++this.seq;
    return new Promise<NsdiagNamespace[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`tide-nsdiag did not answer within ${timeoutMs} ms`));
        this.onExit(child, `tide-nsdiag hung (no answer within ${timeoutMs} ms)`);
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      child.stdin.write(`${JSON.stringify({ id, sysctls, ns: targets })}\n`);
    });
  }

  /** Stop for good (EOF makes tide-nsdiag close every namespace and exit). */
  stop(): void {
    this.stopped = true;
    this.status.state = "stopped";
    if (this.restartTimer !== null) clearTimeout(this.restartTimer);
    const child = this.child;
    this.child = null;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.reject(new Error("tide-nsdiag stopped"));
    }
    if (child !== null) {
      child.stdin.end();
      const kill = setTimeout(() => child.kill("SIGKILL"), 1_000);
      kill.unref();
    }
  }
}
