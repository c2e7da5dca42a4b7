import { spawn, type ChildProcess } from "node:child_process";
import readline from "node:readline";
import type { BccResults, BccTool, BccToolName } from "@tide/contracts";
import { BCC_TOOLS, checkBccTool, type BccHost } from "./availability";
import { log2Bucket } from "@tide/diagnostics";
import { parseSoftirqsDist, parseTcpConnLatLine } from "./parse";

/** Seconds between `softirqs -d` prints (each print covers the interval, then bcc clears it). */
export const SOFTIRQS_INTERVAL_S = 10;
/** A tool that exited is tried again after this long (it recompiles: not every second). */
export const BCC_RETRY_MS = 120_000;
const MAX_PROCESSES = 256;

export interface BccOptions extends BccHost {
  enabled: boolean;
  log: (line: string) => void;
  /** Replaces the binary found (tests run a script that prints recorded output). */
  binaryFor?: (tool: BccToolName) => string | null;
  retryMs?: number;
}

function argsFor(tool: BccToolName): string[] {
  return tool === "softirqs" ? ["-d", String(SOFTIRQS_INTERVAL_S)] : [];
}

function add(into: number[], bucket: number, count: number): void {
  while (into.length <= bucket) into.push(0);
  into[bucket] = (into[bucket] ?? 0) + count;
}

/**
 * Runs the bcc tools that can run here as long-lived children and folds their output into absolute
 * log2 histograms (like tide-probes' results), so consumers take rates the same way. A tool that
 * cannot run is reported off with the reason; one that exits is restarted after BCC_RETRY_MS.
 */
export class BccTools {
  private readonly state = new Map<BccToolName, BccTool>();
  private readonly children = new Map<BccToolName, ChildProcess>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly connect = new Map<number, { comm: string; latencyUs: number[]; total: number }>();
  private readonly softirq = new Map<string, number[]>();
  private stopped = false;

  constructor(private readonly options: BccOptions) {
    for (const tool of BCC_TOOLS)
      this.state.set(tool, { tool, state: "off", reason: "disabled", detail: "not started" });
  }

  start(): void {
    this.stopped = false;
    for (const tool of BCC_TOOLS) this.launch(tool);
  }

  private launch(tool: BccToolName): void {
    if (this.stopped) return;
    if (!this.options.enabled) {
      this.state.set(tool, {
        tool,
        state: "off",
        reason: "disabled",
        detail: "bcc disabled in the agent config",
      });
      return;
    }
    let binary = this.options.binaryFor?.(tool) ?? null;
    if (binary === null) {
      const check = checkBccTool(tool, this.options);
      if (!check.ok) {
        this.state.set(tool, check.tool);
        return;
      }
      binary = check.binary;
    }
    const child = spawn(binary, argsFor(tool), {
      stdio: ["ignore", "pipe", "pipe"],
      env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", LC_ALL: "C" },
    });
    this.children.set(tool, child);
    this.state.set(tool, { tool, state: "on", reason: null, detail: binary });
    let lastError = "";
    readline.createInterface({ input: child.stderr! }).on("line", (l) => {
      if (l.trim()) lastError = l.trim().slice(0, 1000);
    });
    const lines = readline.createInterface({ input: child.stdout! });
    let block: string[] = [];
    lines.on("line", (line) => {
      if (tool === "tcpconnlat") {
        const e = parseTcpConnLatLine(line);
        if (e) this.addConnect(e.pid, e.comm, e.latencyUs);
        return;
      }
      // softirqs: one print per interval, sections separated by blank lines; a blank line after
      // histogram rows ends a section, so fold what we have at every blank line.
      if (line.trim() === "") {
        this.addSoftirqs(block.join("\n"));
        block = [];
      } else block.push(line);
    });
    child.on("error", (e) => {
      lastError = e.message;
    });
    child.on("exit", (code, signal) => {
      if (tool === "softirqs" && block.length) this.addSoftirqs(block.join("\n"));
      this.children.delete(tool);
      if (this.stopped) return;
      const detail = `${binary} exited (${signal ?? code})${lastError ? `: ${lastError}` : ""}`;
      this.options.log(
        `bcc ${tool}: ${detail}; retrying in ${(this.options.retryMs ?? BCC_RETRY_MS) / 1000} s`,
      );
      this.state.set(tool, { tool, state: "off", reason: "exited", detail: detail.slice(0, 1000) });
      const t = setTimeout(() => {
        this.timers.delete(t);
        this.launch(tool);
      }, this.options.retryMs ?? BCC_RETRY_MS);
      t.unref();
      this.timers.add(t);
    });
  }

  private addConnect(pid: number, comm: string, latencyUs: number): void {
    let p = this.connect.get(pid);
    if (!p || p.comm !== comm) {
      p = { comm, latencyUs: [], total: 0 };
      this.connect.set(pid, p);
    }
    add(p.latencyUs, log2Bucket(latencyUs), 1);
    p.total++;
  }

  private addSoftirqs(text: string): void {
    for (const [name, h] of parseSoftirqsDist(text)) {
      const into = this.softirq.get(name) ?? [];
      h.forEach((count, i) => add(into, i, count));
      this.softirq.set(name, into);
    }
  }

  results(): BccResults {
    return {
      tools: BCC_TOOLS.map((t) => this.state.get(t)!),
      tcpConnectLatency: [...this.connect.entries()]
        .sort((a, b) => b[1].total - a[1].total)
        .slice(0, MAX_PROCESSES)
        .map(([pid, p]) => ({ pid, comm: p.comm, latencyUs: [...p.latencyUs] })),
      softirqTime: [...this.softirq.entries()].map(([softirq, h]) => ({ softirq, durationUs: [...h] })),
    };
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const child of this.children.values()) child.kill("SIGTERM");
    this.children.clear();
  }
}
