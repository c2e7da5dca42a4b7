/**
 * What a Docker engine can change on the host, read before and after the compose tier: the
 * iptables/ip6tables rule sets (packet counters left out), the bridges, the links Docker would name
 * (docker*, br-*, veth*), the forwarding and bridge-netfilter sysctls, the files a dockerd and its
 * containerd make outside their data and exec roots (/etc/docker: key.json; /run/docker;
 * /run/containerd) and the engine's cgroup parent below this process's own cgroups (issue 34:
 * each was left behind). `diffHostState` lists every difference; the tier fails on any.
 * Other links are compared too but only reported: on a shared machine other test runs create and
 * remove their own namespaces' veths while the tier runs.
 */
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export interface HostState {
  iptables: string;
  ip6tables: string;
  bridges: string;
  /** Link names (without the @peer suffix). */
  links: string[];
  sysctls: Record<string, string>;
  /** Every path under ENGINE_HOST_DIRS (and the directories themselves), "d " or "f " first. */
  files: string[];
  /** Cgroup directories of the tier's engine (cgroupDirs). */
  cgroups: string[];
}

/** Where a dockerd and its containerd write outside the data and exec roots they are given. */
export const ENGINE_HOST_DIRS = ["/etc/docker", "/run/docker", "/run/containerd"];
/** cgroup parent of every container of the tier's engine (own-dockerd.ts passes it to dockerd). */
export const CGROUP_PARENT = "tide-compose-tier";

/** `dir` and everything below it, as "d /path" / "f /path" lines; [] when it does not exist. */
export function listTree(dir: string): string[] {
  let isDir: boolean;
  try {
    isDir = lstatSync(dir).isDirectory();
  } catch {
    return [];
  }
  if (!isDir) return [`f ${dir}`];
  const out = [`d ${dir}`];
  let names: string[] = [];
  try {
    names = readdirSync(dir).sort();
  } catch {
    // unreadable: the directory itself is still compared
  }
  for (const name of names) out.push(...listTree(path.join(dir, name)));
  return out;
}

/**
 * The cgroup directories a dockerd started by this process makes for --cgroup-parent
 * CGROUP_PARENT: dockerd's cgroupfs driver puts a relative parent below the daemon's own cgroup
 * in each hierarchy (here /sys/fs/cgroup/<controller><this process's cgroup>/CGROUP_PARENT), and
 * every container's cgroup below that. Deepest first.
 */
export function cgroupDirs(procSelfCgroup = readProcSelfCgroup()): string[] {
  const dirs: string[] = [];
  for (const line of procSelfCgroup.split("\n")) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    const controllers = m[1] ?? "";
    const mount =
      controllers === "" ? "unified" : controllers.startsWith("name=") ? controllers.slice(5) : controllers;
    const parent = path.join("/sys/fs/cgroup", mount, m[2] ?? "/", CGROUP_PARENT);
    for (const entry of listTree(parent)) if (entry.startsWith("d ")) dirs.push(entry.slice(2));
  }
  return [...new Set(dirs)].sort((a, b) => b.length - a.length || a.localeCompare(b));
}

function readProcSelfCgroup(): string {
  try {
    return readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return "";
  }
}

/** Links a Docker engine creates: its default bridge, user-defined bridges and container veths. */
const DOCKER_LINK = /^(docker|br-|veth)/;
const SYSCTLS = ["net/ipv4/ip_forward", "net/ipv4/conf/all/forwarding", "net/ipv6/conf/all/forwarding"];

function run(command: string, args: string[]): string {
  const r = spawnSync(command, args, { encoding: "utf8" });
  if (r.error) return `(${command} unavailable: ${r.error.message})`;
  return r.stdout;
}

/** iptables-save output without its comment lines and packet/byte counters. */
export function normaliseRules(save: string): string {
  return save
    .split("\n")
    .filter((line) => !line.startsWith("#"))
    .map((line) => line.replace(/\s\[\d+:\d+\]$/, ""))
    .join("\n");
}

function readSysctls(): Record<string, string> {
  const names = [...SYSCTLS];
  const bridge = "/proc/sys/net/bridge";
  if (existsSync(bridge)) for (const f of readdirSync(bridge)) names.push(`net/bridge/${f}`);
  const out: Record<string, string> = {};
  for (const name of names) {
    try {
      out[name.replaceAll("/", ".")] = readFileSync(path.join("/proc/sys", name), "utf8").trim();
    } catch {
      out[name.replaceAll("/", ".")] = "(absent)";
    }
  }
  return out;
}

export function snapshotHost(): HostState {
  return {
    iptables: normaliseRules(run("iptables-save", [])),
    ip6tables: normaliseRules(run("ip6tables-save", [])),
    bridges: run("ip", ["-br", "link", "show", "type", "bridge"]),
    links: run("ip", ["-br", "link"])
      .split("\n")
      .map((line) => line.split(/\s+/)[0]?.split("@")[0] ?? "")
      .filter(Boolean)
      .sort(),
    sysctls: readSysctls(),
    files: ENGINE_HOST_DIRS.flatMap((d) => listTree(d)),
    cgroups: cgroupDirs(),
  };
}

export interface HostDiff {
  /** Changes the tier fails on. */
  changed: string[];
  /** Other links that came or went meanwhile (not Docker's). */
  otherLinks: string[];
}

export function diffHostState(before: HostState, after: HostState): HostDiff {
  const changed: string[] = [];
  if (before.iptables !== after.iptables) changed.push("iptables rules (iptables-save) differ");
  if (before.ip6tables !== after.ip6tables) changed.push("ip6tables rules (ip6tables-save) differ");
  if (before.bridges !== after.bridges)
    changed.push(`bridges differ: before [${before.bridges.trim()}] after [${after.bridges.trim()}]`);
  const added = after.links.filter((l) => !before.links.includes(l));
  const removed = before.links.filter((l) => !after.links.includes(l));
  for (const l of [...added, ...removed].filter((l) => DOCKER_LINK.test(l)))
    changed.push(`link ${l} ${added.includes(l) ? "appeared" : "disappeared"}`);
  for (const [name, value] of Object.entries({ ...before.sysctls, ...after.sysctls })) {
    if (before.sysctls[name] !== after.sysctls[name])
      changed.push(`sysctl ${name}: ${before.sysctls[name] ?? "(absent)"} -> ${value}`);
  }
  for (const f of after.files.filter((f) => !before.files.includes(f)))
    changed.push(`${f.slice(2)} appeared`);
  for (const f of before.files.filter((f) => !after.files.includes(f)))
    changed.push(`${f.slice(2)} disappeared`);
  for (const c of after.cgroups.filter((c) => !before.cgroups.includes(c)))
    changed.push(`cgroup ${c} left behind`);
  const otherLinks = [
    ...added.filter((l) => !DOCKER_LINK.test(l)).map((l) => `+${l}`),
    ...removed.filter((l) => !DOCKER_LINK.test(l)).map((l) => `-${l}`),
  ];
  return { changed, otherLinks };
}
