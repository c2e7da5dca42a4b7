import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import {
  firstWireIssue,
  NsdiagLine,
  NsdiagNamespace as NsdiagNamespaceWire,
  type NsdiagRequest,
} from "@tide/contracts";
import { z } from "zod";

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

/** One namespace in a tide-nsdiag reply, as the agent keeps it (the wire: nsdiag-wire.ts in contracts). */
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

/**
 * Check one namespace entry of a reply against the contract (NsdiagNamespace in @tide/contracts).
 * tide-nsdiag is ours, but a bad entry must not crash the agent: an entry that names a namespace
 * but does not match is reported as that namespace's error, anything else is null (dropped).
 * `problem` says what did not match (null when the entry did).
 */
export function checkNsdiagNamespace(v: unknown): { ns: NsdiagNamespace | null; problem: string | null } {
  const r = NsdiagNamespaceWire.safeParse(v);
  if (!r.success) {
    const problem = firstWireIssue(r.error);
    const inode = z.object({ inode: z.int().min(1) }).safeParse(v);
    if (!inode.success) return { ns: null, problem };
    const error = `tide-nsdiag: malformed entry (${problem})`.slice(0, 1000);
    return { ns: { inode: inode.data.inode, state: "error", error }, problem };
  }
  return { ns: fromWire(r.data), problem: null };
}

/** checkNsdiagNamespace's namespace alone. */
export function parseNsdiagNamespace(v: unknown): NsdiagNamespace | null {
  return checkNsdiagNamespace(v).ns;
}

function fromWire(n: NsdiagNamespaceWire): NsdiagNamespace {
  if (n.state !== "ok") return { inode: n.inode, state: n.state, error: n.error.slice(0, 1000) };
  return {
    inode: n.inode,
    state: "ok",
    listeners: n.listeners,
    listenersTotal: n.listeners_total,
    ports: n.ports,
    established: n.established ?? null,
    establishedTotal: n.established_total ?? null,
    sysctls: n.sysctls === undefined ? null : new Map(Object.entries(n.sysctls)),
    netstat: n.netstat ?? null,
    snmp: n.snmp ?? null,
    sockstat: n.sockstat ?? null,
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
  private refusedCount = 0;
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

  /** Lines or reply entries that did not match the contract (skipped, logged at 1, 10, 100, ...). */
  get refused(): number {
    return this.refusedCount;
  }

  private refuse(what: string): void {
    this.refusedCount++;
    if (Number.isInteger(Math.log10(this.refusedCount)))
      this.log(`tide-nsdiag: skipped ${what} (${this.refusedCount} so far)`);
  }

  private onLine(line: string): void {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      this.refuse(`a line that is not JSON: ${line.slice(0, 200)}`);
      return; // the request times out if its reply is lost
    }
    const parsed = NsdiagLine.safeParse(json);
    if (!parsed.success) {
      this.refuse(`a line that is not a reply: ${firstWireIssue(parsed.error)}`);
      return;
    }
    const msg = parsed.data;
    if ("type" in msg) return; // hello
    if (msg.id === null) {
      this.log(`tide-nsdiag: ${"error" in msg ? msg.error : "reply without id"}`);
      return;
    }
    const p = this.pending.get(msg.id);
    if (p === undefined) return;
    this.pending.delete(msg.id);
    clearTimeout(p.timer);
    if ("error" in msg) {
      p.reject(new Error(`tide-nsdiag: ${msg.error}`));
      return;
    }
    this.restartDelayMs = NSDIAG_RESTART_MIN_MS; // it works again
    this.status.lastError = null;
    const namespaces: NsdiagNamespace[] = [];
    for (const entry of msg.ns) {
      const { ns, problem } = checkNsdiagNamespace(entry);
      if (problem !== null) this.refuse(`a reply entry (${problem})`);
      if (ns !== null) namespaces.push(ns);
    }
    p.resolve(namespaces);
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
      const request: NsdiagRequest = {
        id,
        sysctls,
        ns: targets.map((t) => ({ inode: t.inode, path: t.path })),
      };
      child.stdin.write(`${JSON.stringify(request)}\n`);
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
