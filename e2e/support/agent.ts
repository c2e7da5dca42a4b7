/**
 * The real tide-agent for the lab e2e tests and the live-latency bench: a host token made through
 * the REST API as the signed-in e2e admin, a config file in a temp dir, and the built bundle
 * (`node apps/agent/dist/tide-agent.js --config FILE`) in the root namespace, pointed at the e2e
 * console, with tide-probes (dataplane/build/tide-probes) so listeners carry the backlog passed to
 * listen() (LIMITED) and per-port overflow drops. stop() kills it and removes the files.
 *
 * The agent checks path MTU from its own (root) namespace, and the lab's PMTU incident is a closed
 * chain of namespaces: packages/lab/src/incidents/pmtu-gateway.ts gives the root namespace a way in.
 */
import type { APIRequestContext } from "@playwright/test";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT, waitFor } from "@tide/devstack";

export const AGENT_BUNDLE = path.join(REPO_ROOT, "apps/agent/dist/tide-agent.js");
export const PROBES_BINARY = path.join(REPO_ROOT, "dataplane/build/tide-probes");
export const NSDIAG_BINARY = path.join(REPO_ROOT, "dataplane/build/tide-nsdiag");
/** The agent's default and the console's: one sample per second. */
export const SAMPLE_INTERVAL_MS = 1_000;
/** Hello and a first batch take a second or two; 30 s leaves room for a busy CI machine. */
const AGENT_FIRST_REPORT_TIMEOUT_MS = 30_000;

/** The lab tier needs root (namespaces, BPF); CI runs it as root. Fail loudly, never skip. */
export function requireRoot(): void {
  if (process.getuid?.() !== 0) {
    throw new Error("lab e2e: must run as root (network namespaces, tide-probes); CI runs e2e as root");
  }
}

function ensureBuilt(file: string, what: string, command: string[], log: (line: string) => void): void {
  if (fs.existsSync(file)) return;
  log(`e2e: no ${what} (${path.relative(REPO_ROOT, file)}); building it: ${command.join(" ")}`);
  const r = spawnSync(command[0]!, command.slice(1), { cwd: REPO_ROOT, stdio: "inherit" });
  if (r.status !== 0 || !fs.existsSync(file))
    throw new Error(`e2e: building ${what} failed (exit ${r.status})`);
}

/** Builds the agent bundle and tide-probes if missing (the build tier normally made them). */
export function ensureAgentBuild(log: (line: string) => void = console.log): void {
  ensureBuilt(AGENT_BUNDLE, "agent bundle", ["npm", "run", "build", "-w", "@tide/agent"], log);
  ensureBuilt(PROBES_BINARY, "tide-probes", ["make", "-C", "dataplane", "--no-print-directory", "all"], log);
  ensureBuilt(NSDIAG_BINARY, "tide-nsdiag", ["make", "-C", "dataplane", "--no-print-directory", "all"], log);
}

export interface AgentOptions {
  /** A request context signed in as the e2e admin (page.request or context.request). */
  request: APIRequestContext;
  baseURL: string;
  hostname: string;
  pmtuTargets?: string[];
  /** Every configured PMTU target is checked this often (the agent's minimum is 5 s). */
  pmtuIntervalMs?: number;
}

export interface RunningAgent {
  hostname: string;
  pid: number;
  /** The agent's stderr/stdout so far (last 32 kB), for failure messages. */
  output(): string;
  /** SIGTERM, SIGKILL after 5 s; removes the temp dir. Safe to call twice. */
  stop(): Promise<void>;
}

async function createHostToken(request: APIRequestContext, hostname: string): Promise<string> {
  const res = await request.post("/api/v1/host-tokens", { data: { hostname } });
  if (res.status() !== 200)
    throw new Error(`POST /api/v1/host-tokens: HTTP ${res.status()} ${await res.text()}`);
  const { token } = (await res.json()) as { token: string };
  return token;
}

export async function startAgent(o: AgentOptions): Promise<RunningAgent> {
  requireRoot();
  ensureAgentBuild();
  const token = await createHostToken(o.request, o.hostname);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tide-e2e-agent-${process.pid}-`));
  const tokenFile = path.join(dir, "host-token");
  fs.writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  const configFile = path.join(dir, "agent.json");
  fs.writeFileSync(
    configFile,
    JSON.stringify(
      {
        consoleUrl: o.baseURL,
        hostTokenFile: tokenFile,
        hostname: o.hostname,
        roles: ["proxy"],
        probesBinary: PROBES_BINARY,
        nsdiagBinary: NSDIAG_BINARY,
        pmtuTargets: o.pmtuTargets ?? [],
        pmtuIntervalMs: o.pmtuIntervalMs ?? 10_000,
        sampleIntervalMs: SAMPLE_INTERVAL_MS,
        metricsListen: "", // no fixed port: other agents may run on this machine
        tableDir: path.join(dir, "tables"),
        spoolDir: path.join(dir, "spool"),
      },
      null,
      2,
    ),
  );

  let output = "";
  // Own process group: stop() also ends tide-probes and the agent's namespace helpers.
  const child: ChildProcess = spawn(process.execPath, [AGENT_BUNDLE, "--config", configFile], {
    cwd: dir,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin", LANG: "C" },
  });
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-32_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const signal = (s: NodeJS.Signals) => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, s);
    } catch {
      // already gone
    }
  };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    signal("SIGTERM");
    const timeout = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 5_000).unref());
    if ((await Promise.race([exited, timeout])) === "timeout") {
      signal("SIGKILL");
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  if (child.pid === undefined) {
    await stop();
    throw new Error(`e2e: could not start the agent: ${output}`);
  }
  // Started means heard from: wait until the console has the agent's first report, and fail at once
  // (with its output) if the agent exits first, e.g. on a configuration error.
  try {
    await waitFor(
      `the console to hear from the agent of ${o.hostname}`,
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`e2e: the agent exited (${child.exitCode ?? child.signalCode}):\n${output}`);
        }
        const res = await o.request.get(`/api/v1/hosts/${encodeURIComponent(o.hostname)}`);
        if (res.status() === 404) return false;
        if (res.status() !== 200) throw new Error(`GET /api/v1/hosts/${o.hostname}: HTTP ${res.status()}`);
        return ((await res.json()) as { lastSeenAt: string | null }).lastSeenAt !== null;
      },
      { timeoutMs: AGENT_FIRST_REPORT_TIMEOUT_MS, intervalMs: 250, detail: () => `agent output:\n${output}` },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    hostname: o.hostname,
    pid: child.pid,
    output: () => output.replaceAll(token, "[token]"),
    stop,
  };
}
