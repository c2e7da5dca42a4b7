/**
 * The real tide-agent for the lab e2e tests and the live-latency bench: a host token made through
 * the REST API as the signed-in e2e admin, a config file in a temp dir, and the built bundle
 * (`node apps/agent/dist/tide-agent.js --config FILE`) in the root namespace, pointed at the e2e
 * console, with tide-probes (dataplane/build/tide-probes) so listeners carry the backlog passed to
 * listen() (LIMITED) and per-port overflow drops. stop() kills it and removes the files.
 *
 * The agent checks path MTU from its own (root) namespace, and the lab's PMTU incident is a closed
 * chain of namespaces: routeFromRoot() gives the root namespace a way in (see there).
 */
import type { APIRequestContext } from "@playwright/test";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT } from "../../packages/devstack/src/postgres-cluster";
import { runCommand, runInNamespace } from "../../packages/lab/src/host-command";
import type { PmtuHandle } from "../../packages/lab/src/incidents/pmtu-blackhole";

export const AGENT_BUNDLE = path.join(REPO_ROOT, "apps/agent/dist/tide-agent.js");
export const PROBES_BINARY = path.join(REPO_ROOT, "dataplane/build/tide-probes");
export const NSDIAG_BINARY = path.join(REPO_ROOT, "dataplane/build/tide-nsdiag");
/** The agent's default and the console's: one sample per second. */
export const SAMPLE_INTERVAL_MS = 1_000;

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
  // A config error exits at once; give it a moment to say so instead of failing later in a wait.
  await new Promise((r) => setTimeout(r, 500));
  if (child.exitCode !== null || child.signalCode !== null) {
    await stop();
    throw new Error(`e2e: the agent exited (${child.exitCode ?? child.signalCode}):\n${output}`);
  }
  return {
    hostname: o.hostname,
    pid: child.pid,
    output: () => output.replaceAll(token, "[token]"),
    stop,
  };
}

/** The root namespace's end of the link into the PMTU incident, per test process. */
export const ROOT_LINK = {
  ifname: `tpmr${process.pid % 10_000_000}`.slice(0, 15),
  rootAddress: "10.201.34.2",
  routerAddress: "10.201.34.1",
  cidr: "10.201.34.0/30",
};

/**
 * The PMTU incident (packages/lab/src/incidents/pmtu-blackhole.ts) is a chain of namespaces
 * client -1500- ra -1200- rb -9000- server that the root namespace has no route into, and the agent
 * checks paths from its own namespace. So the root namespace gets what a real host would have: a
 * 1500-byte link to router ra (10.201.34.0/30), a host route to the server via ra, and rb a route
 * back. Large DF packets from the root then meet the same 1200-byte link and the same dropped
 * ICMP frag-needed as the incident's client does. The veth lives in ra: deleting the incident's
 * namespaces (its teardown) removes the link and the root route with it; removeRouteFromRoot()
 * does it earlier. Call it after trigger(): the root namespace must not learn a PMTU for the server
 * (from a frag-needed that got through) before the agent's check.
 */
export async function routeFromRoot(pmtu: PmtuHandle): Promise<{ target: string }> {
  const ra = pmtu.namespaces.routerA.name;
  const rb = pmtu.namespaces.routerB.name;
  const target = pmtu.namespaces.server.address;
  const peer = `tpma${process.pid % 10_000_000}`.slice(0, 15);
  await removeRouteFromRoot();
  await assertRootRoutesFree();
  await runCommand([
    "ip",
    "link",
    "add",
    ROOT_LINK.ifname,
    "type",
    "veth",
    "peer",
    "name",
    peer,
    "netns",
    ra,
  ]);
  await runCommand(["ip", "link", "set", ROOT_LINK.ifname, "mtu", "1500"]);
  await runCommand(["ip", "addr", "add", `${ROOT_LINK.rootAddress}/30`, "dev", ROOT_LINK.ifname]);
  await runCommand(["ip", "link", "set", ROOT_LINK.ifname, "up"]);
  await runInNamespace(ra, ["ip", "link", "set", peer, "name", "pm-root"]);
  await runInNamespace(ra, ["ip", "addr", "add", `${ROOT_LINK.routerAddress}/30`, "dev", "pm-root"]);
  await runInNamespace(ra, ["ip", "link", "set", "pm-root", "up"]);
  // Like addVeth(): no offloads, or GSO would hide the MTU step.
  for (const [ns, dev] of [
    [null, ROOT_LINK.ifname],
    [ra, "pm-root"],
  ] as const) {
    const cmd = ["ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"];
    if (ns === null) await runCommand(cmd, { allowFailure: true });
    else await runInNamespace(ns, cmd, { allowFailure: true });
  }
  await runInNamespace(rb, ["ip", "route", "add", ROOT_LINK.cidr, "via", "10.201.32.1"]);
  // A /32: the root namespace learns nothing about the incident's other subnets.
  await runCommand([
    "ip",
    "route",
    "add",
    `${target}/32`,
    "via",
    ROOT_LINK.routerAddress,
    "dev",
    ROOT_LINK.ifname,
  ]);
  return { target };
}

/**
 * The PMTU incident's addresses are fixed (10.201.31-33.x), so two setups that route root into
 * one (another test process, e.g. apps/agent's lab tests on a shared machine) would steal each
 * other's probes. Wait a while for the other one to finish, then fail loudly.
 */
async function assertRootRoutesFree(waitMs = 90_000): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const { stdout } = await runCommand(["ip", "-4", "route", "show"]);
    const taken = stdout.split("\n").filter((l) => l.trim().startsWith("10.201."));
    if (taken.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(
        `lab e2e: the root namespace still routes lab addresses after ${waitMs / 1000} s (another PMTU setup is running?):\n${taken.join("\n")}`,
      );
    }
    await new Promise((r) => setTimeout(r, 2_000));
  }
}

/** Deletes the root end of the link (and so its route); missing is fine. */
export async function removeRouteFromRoot(): Promise<void> {
  await runCommand(["ip", "link", "del", ROOT_LINK.ifname], { allowFailure: true });
}
