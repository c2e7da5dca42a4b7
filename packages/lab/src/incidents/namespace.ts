import { existsSync } from "node:fs";
/**
 * Network namespaces for the incident scenarios: every name starts with `tide-inc-` (the glb lab
 * owns `tide-glb-`), every command runs through host-command.ts (argv, timeout), and a crashed run
 * is cleaned by the next one (stale `tide-inc-*` namespaces lose their processes, then go).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { LabError } from "../errors";
import { labWaitFor } from "../lab-wait";
import {
  listNamespaces,
  namespacePids,
  runCommand,
  runInNamespace,
  type CommandResult,
} from "../host-command";
import { stopPid } from "../lab-process";
import { parseNetCounters, type NetCounters } from "../net-counters";
import { OFFLOADS_OFF } from "../topology";

/** Every namespace an incident creates starts with this; nothing else is ever deleted. */
/** Every incident namespace starts with this. */
export const INCIDENT_ROOT = "tide-inc-";
/**
 * This process's incident namespaces: the owner's pid is in the name, so two runs (a developer's
 * and CI's, or two test processes) never delete each other's namespaces; a namespace whose owner
 * is gone is stale and cleanupStaleNamespaces() removes it.
 */
export const INCIDENT_PREFIX = `${INCIDENT_ROOT}${process.pid}-`;
/** The interpreter of the helper programs (the system one, not a user's pyenv shim). */
export const PYTHON = "/usr/bin/python3";

/** What a namespace plays in a scenario, for the agent's findings and the operator. */
export type NamespaceRole = "client" | "server" | "router";

export interface IncidentNamespace {
  name: string;
  role: NamespaceRole;
  /** The address the scenario gives it on its main link (no prefix length). */
  address: string;
}

/** Absolute path of a helper program in packages/lab/assets/incidents/. */
export function incidentAsset(file: string): string {
  return fileURLToPath(new URL(`../../assets/incidents/${file}`, import.meta.url));
}

function assertIncidentName(name: string): void {
  if (!name.startsWith(INCIDENT_ROOT) || name.length > 64 || !/^[a-z0-9-]+$/.test(name)) {
    throw new LabError("bad_argument", `${name}: incident namespaces are named ${INCIDENT_ROOT}[a-z0-9-]+`);
  }
}

export function requireRoot(): void {
  if (process.getuid?.() !== 0) throw new LabError("not_root", "incident scenarios need root (namespaces)");
}

/** Stops every process living in the namespace, then deletes it. Missing namespaces are fine. */
export async function deleteNamespace(name: string): Promise<void> {
  assertIncidentName(name);
  const existing = await listNamespaces();
  if (!existing.includes(name)) return;
  for (const pid of await namespacePids(name)) await stopPid(pid, 2_000);
  await runCommand(["ip", "netns", "del", name], { allowFailure: true });
}

/** True when the process that created an incident namespace (pid in its name) is gone. */
function ownerGone(name: string): boolean {
  const pid = /^tide-inc-(\d+)-/.exec(name)?.[1];
  return pid === undefined || !existsSync(`/proc/${pid}`);
}

/**
 * Removes this process's namespaces under `prefix` (default: all of this process's) and the
 * leftovers of crashed runs (incident namespaces whose owner process is gone). Namespaces of
 * other live runs are never touched.
 */
export async function cleanupStaleNamespaces(prefix = INCIDENT_PREFIX): Promise<string[]> {
  if (!prefix.startsWith(INCIDENT_PREFIX))
    throw new LabError("bad_argument", `${prefix}: not an incident prefix of this process`);
  const stale = (await listNamespaces()).filter(
    (n) => n.startsWith(prefix) || (n.startsWith(INCIDENT_ROOT) && ownerGone(n)),
  );
  for (const name of stale) await deleteNamespace(name);
  return stale;
}

/** Creates the namespace (deleting a stale one of the same name first) with lo up. */
export async function createNamespace(name: string): Promise<void> {
  assertIncidentName(name);
  await deleteNamespace(name);
  await runCommand(["ip", "netns", "add", name]);
  await runInNamespace(name, ["ip", "link", "set", "lo", "up"]);
}

export interface VethEnd {
  namespace: string;
  ifname: string;
  /** Address with prefix length, e.g. 10.201.1.1/24. */
  cidr: string;
  mtu: number;
}

/**
 * A veth pair between two namespaces with addresses, MTUs (the two ends may differ: an MTU
 * mismatch) and offloads off (GSO/GRO would hide MTU problems and merge small segments).
 */
export async function addVeth(a: VethEnd, b: VethEnd): Promise<void> {
  const tmpA = `ti${process.pid % 100_000}a${a.ifname}`.slice(0, 15);
  const tmpB = `ti${process.pid % 100_000}b${b.ifname}`.slice(0, 15);
  await runCommand(["ip", "link", "add", tmpA, "type", "veth", "peer", "name", tmpB]);
  for (const [tmp, end] of [
    [tmpA, a],
    [tmpB, b],
  ] as const) {
    await runCommand(["ip", "link", "set", tmp, "netns", end.namespace]);
    await runInNamespace(end.namespace, ["ip", "link", "set", tmp, "name", end.ifname]);
    await runInNamespace(end.namespace, ["ip", "link", "set", end.ifname, "mtu", String(end.mtu)]);
    await runInNamespace(end.namespace, ["ip", "addr", "add", end.cidr, "dev", end.ifname]);
    await runInNamespace(end.namespace, ["ethtool", "-K", end.ifname, ...OFFLOADS_OFF], {
      allowFailure: true,
    });
    await runInNamespace(end.namespace, ["ip", "link", "set", end.ifname, "up"]);
  }
}

/** The client and server of a two-namespace scenario: 10.201.<subnet>.2 and .1 on one /24. */
export function clientServerNamespaces(
  prefix: string,
  subnet: number,
): { client: IncidentNamespace; server: IncidentNamespace } {
  return {
    client: { name: `${prefix}client`, role: "client", address: `10.201.${subnet}.2` },
    server: { name: `${prefix}server`, role: "server", address: `10.201.${subnet}.1` },
  };
}

/** Creates both namespaces and the veth between them (`ifname` on both ends, MTU 1500). */
export async function createClientServerPair(
  client: IncidentNamespace,
  server: IncidentNamespace,
  ifname: string,
): Promise<void> {
  await createNamespace(client.name);
  await createNamespace(server.name);
  await addVeth(
    { namespace: client.name, ifname, cidr: `${client.address}/24`, mtu: 1500 },
    { namespace: server.name, ifname, cidr: `${server.address}/24`, mtu: 1500 },
  );
}

/** `sysctl -w key=value` inside the namespace (net.* keys are per namespace). */
export async function setSysctl(namespace: string, key: string, value: string | number): Promise<void> {
  await runInNamespace(namespace, ["sysctl", "-q", "-w", `${key}=${value}`]);
}

export async function getSysctl(namespace: string, key: string): Promise<string> {
  const { stdout } = await runInNamespace(namespace, ["sysctl", "-n", key]);
  return stdout.trim().replace(/\s+/g, " ");
}

/** Absolute /proc/net/netstat + /proc/net/snmp counters of the namespace (TcpExt, Tcp, Ip, IcmpMsg...). */
export async function readNetCounters(namespace: string): Promise<NetCounters> {
  const { stdout } = await runInNamespace(namespace, ["cat", "/proc/net/netstat", "/proc/net/snmp"]);
  return parseNetCounters(stdout);
}

/** Absolute values of the named nstat counters (`nstat -asz --json`, no history file touched). */
export async function readNstat(namespace: string): Promise<Record<string, number>> {
  const { stdout } = await runInNamespace(namespace, ["nstat", "-asz", "--json"]);
  const parsed = JSON.parse(stdout) as Record<string, Record<string, number>>;
  return Object.values(parsed)[0] ?? {};
}

/** One LISTEN socket from `ss -ltnH`. */
export interface ListenSocket {
  local: string;
  port: number;
  /** Connections waiting in the accept queue now. */
  recvQ: number;
  /** The effective backlog (after the somaxconn cap). */
  sendQ: number;
}

export function parseSsListen(text: string): ListenSocket[] {
  const out: ListenSocket[] = [];
  for (const line of text.split("\n")) {
    const f = line.trim().split(/\s+/);
    // State Recv-Q Send-Q Local:Port Peer:Port
    if (f.length < 5 || f[0] !== "LISTEN") continue;
    const local = f[3] ?? "";
    const port = Number(local.slice(local.lastIndexOf(":") + 1));
    out.push({ local, port, recvQ: Number(f[1]), sendQ: Number(f[2]) });
  }
  return out;
}

export async function listenSockets(namespace: string): Promise<ListenSocket[]> {
  const { stdout } = await runInNamespace(namespace, ["ss", "-ltnH"]);
  return parseSsListen(stdout);
}

export async function nftApply(namespace: string, script: string): Promise<CommandResult> {
  return runInNamespace(namespace, ["nft", script]);
}

/**
 * A long-running helper inside a namespace (`ip netns exec` execs it, so the pid is the helper's).
 * It prints JSON lines on stdout; the first one with `"ready": true` ends start().
 */
export class NamespaceProcess {
  readonly lines: Record<string, unknown>[] = [];
  private exited = false;

  private constructor(
    readonly namespace: string,
    readonly argv: readonly string[],
    private readonly child: ChildProcess,
  ) {
    let buffer = "";
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (!line.startsWith("{")) continue;
        try {
          this.lines.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          /* not one of ours */
        }
      }
    });
    child.stderr?.resume();
    child.on("exit", () => {
      this.exited = true;
    });
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  get alive(): boolean {
    return !this.exited;
  }

  static async start(
    namespace: string,
    argv: readonly string[],
    readyTimeoutMs = 10_000,
  ): Promise<NamespaceProcess> {
    const child = spawn("ip", ["netns", "exec", namespace, ...argv], { stdio: ["pipe", "pipe", "pipe"] });
    child.on("error", () => {
      /* seen as not ready below */
    });
    const proc = new NamespaceProcess(namespace, argv, child);
    try {
      await labWaitFor(
        `a "ready" line from ${argv.join(" ")}`,
        () => {
          if (proc.lines.some((l) => l["ready"] === true)) return true;
          if (!proc.alive) throw new LabError("process_exited", `${argv.join(" ")} exited`);
          return false;
        },
        { timeoutMs: readyTimeoutMs, intervalMs: 20 },
      );
      return proc;
    } catch {
      await proc.stop();
      throw new LabError(
        "process_exited",
        `${argv.join(" ")} in ${namespace}: not ready in ${readyTimeoutMs} ms`,
      );
    }
  }

  /** Sends a signal (e.g. SIGUSR1: the helper's "apply the remedy" command). */
  signal(sig: NodeJS.Signals): void {
    if (this.alive) this.child.kill(sig);
  }

  /** Waits until a line with the given key appears (bounded). */
  waitFor(key: string, timeoutMs: number): Promise<Record<string, unknown>> {
    const what = `a "${key}" line from ${this.argv.join(" ")}`;
    return labWaitFor(
      what,
      () => {
        const hit = this.lines.find((l) => key in l);
        if (hit) return hit;
        if (!this.alive) throw new LabError("timeout", `no ${what}: it exited`);
        return undefined;
      },
      { timeoutMs, intervalMs: 20 },
    );
  }

  async stop(graceMs = 2_000): Promise<void> {
    if (!this.alive) return;
    this.child.kill("SIGTERM");
    const deadline = Date.now() + graceMs;
    while (this.alive && Date.now() < deadline) await sleep(20);
    if (this.alive) this.child.kill("SIGKILL");
    for (let i = 0; i < 50 && this.alive; i++) await sleep(20);
  }
}

/** Runs a one-shot helper in the namespace and parses the last JSON line it prints. */
export async function runJsonHelper<T>(
  namespace: string,
  argv: readonly string[],
  timeoutMs: number,
): Promise<T> {
  const { stdout } = await runInNamespace(namespace, argv, { timeoutMs });
  const last = stdout
    .trim()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .pop();
  if (!last) throw new LabError("control_error", `${argv.join(" ")}: printed no JSON`, { stdout });
  return JSON.parse(last) as T;
}

/** Counter b - a for one TcpExt/Ip/... name (absent = 0). */
export function counterDelta(a: NetCounters, b: NetCounters, group: string, name: string): number {
  return (b[group]?.[name] ?? 0) - (a[group]?.[name] ?? 0);
}
