/**
 * A Docker engine owned by the compose tier, that leaves the host as it found it: no iptables
 * rules, no docker0 bridge, no ip_forward (`--iptables=false --ip6tables=false --bridge=none
 * --ip-forward=false`; builds and services use host networking), its own socket, pid file, exec
 * root and trust key (else /etc/docker/key.json) in a temp dir, a config file of its own (the
 * host's /etc/docker/daemon.json does not apply) and its own cgroup parent. What dockerd and its
 * containerd still make on the host (/etc/docker, /run/docker/plugins, /run/containerd/s, the
 * cgroup parent below this process's cgroups) is removed when it stops, if it was not there before. A default dockerd would set FORWARD to DROP, add NAT chains and
 * docker0 and turn on bridge netfilter, which breaks the network-namespace lab.
 * The data root (images, build cache, volumes) is kept between runs for warm builds.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CGROUP_PARENT, cgroupDirs, ENGINE_HOST_DIRS, listTree } from "./host-state";

const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

export interface OwnDockerd {
  /** Environment for docker / docker-compose: DOCKER_HOST of this engine. */
  env: NodeJS.ProcessEnv;
  /** Stops the engine, unmounts what it left mounted and removes the temp dir. */
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Mount points at or below `dir` (deepest first), from /proc/self/mountinfo. */
export function mountsUnder(dir: string): string[] {
  const prefix = dir.endsWith("/") ? dir : `${dir}/`;
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4]?.replace(/\\040/g, " "))
    .filter((m): m is string => m !== undefined && (m === dir || m.startsWith(prefix)))
    .sort((a, b) => b.length - a.length);
}

function unmountAll(dir: string): string[] {
  for (const m of mountsUnder(dir)) {
    if (spawnSync("umount", [m]).status !== 0) spawnSync("umount", ["-l", m]);
  }
  return mountsUnder(dir);
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
}

export async function startOwnDockerd(o: {
  dataRoot: string;
  log: (line: string) => void;
}): Promise<OwnDockerd> {
  const dir = mkdtempSync("/tmp/tide-dockerd-");
  const logFile = path.join(dir, "dockerd.log");
  const configFile = path.join(dir, "daemon.json");
  const socket = path.join(dir, "docker.sock");
  // dockerd 20.10 keeps a "trust key" in /etc/docker/key.json unless told otherwise (the setting
  // has no flag of its own in 20.10's dockerd; newer engines ignore it).
  writeFileSync(configFile, `${JSON.stringify({ "deprecated-key-path": path.join(dir, "key.json") })}\n`);
  const hostBefore = new Set(ENGINE_HOST_DIRS.flatMap((d) => listTree(d)));
  const cgroupsBefore = new Set(cgroupDirs());
  mkdirSync(o.dataRoot, { recursive: true });
  const args = [
    "--iptables=false",
    "--ip6tables=false",
    "--bridge=none",
    "--ip-forward=false",
    "--ip-masq=false",
    "--config-file",
    configFile,
    "--data-root",
    o.dataRoot,
    "--exec-root",
    path.join(dir, "exec"),
    "--pidfile",
    path.join(dir, "dockerd.pid"),
    "--cgroup-parent",
    CGROUP_PARENT,
    "-H",
    `unix://${socket}`,
  ];
  const out = openSync(logFile, "a");
  const child = spawn("dockerd", args, { stdio: ["ignore", out, out] });
  const env = { ...process.env, DOCKER_HOST: `unix://${socket}` };
  o.log(`dockerd ${args.join(" ")}`);

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await Promise.race([exited(child), sleep(STOP_TIMEOUT_MS)]);
      if (child.exitCode === null && child.signalCode === null) {
        o.log(`dockerd did not stop within ${STOP_TIMEOUT_MS / 1000} s: SIGKILL`);
        child.kill("SIGKILL");
        await exited(child);
      }
    }
    // dockerd leaves <exec root>/netns/default mounted (nsfs); the data root's overlay mounts
    // normally go with it, but a killed engine leaves them too.
    const left = [...unmountAll(dir), ...unmountAll(o.dataRoot)];
    if (left.length) throw new Error(`still mounted after stopping dockerd: ${left.join(", ")}`);
    // The cgroup parent and any container cgroup dockerd did not remove (deepest first; rmdir
    // removes only empty cgroups, so one still in use stays and the host check reports it).
    for (const cgroup of cgroupDirs()) {
      if (cgroupsBefore.has(cgroup)) continue;
      try {
        rmdirSync(cgroup);
      } catch {
        // in use or gone
      }
    }
    // What dockerd/containerd made outside the temp dir: only what was not there before, and
    // only directories with nothing but empty directories (or the key of this engine) in them.
    for (const top of ENGINE_HOST_DIRS) {
      const entries = listTree(top).filter((e) => !hostBefore.has(e));
      for (const entry of entries.reverse()) {
        const p = entry.slice(2);
        try {
          if (entry.startsWith("d ")) rmdirSync(p);
          else if (p === "/etc/docker/key.json") rmSync(p);
        } catch {
          // not empty: something else uses it; the host check reports what is left
        }
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const started = Date.now();
  while (Date.now() - started < READY_TIMEOUT_MS) {
    if (child.exitCode !== null) {
      const tail = readFileSync(logFile, "utf8").trim().split("\n").slice(-15).join("\n");
      await stop();
      throw new Error(`dockerd exited with ${child.exitCode} during start-up:\n${tail}`);
    }
    if (spawnSync("docker", ["version", "--format", "{{.Server.Version}}"], { env }).status === 0) {
      o.log(`dockerd ready in ${((Date.now() - started) / 1000).toFixed(1)} s (socket ${socket})`);
      return { env, stop };
    }
    await sleep(500);
  }
  await stop();
  throw new Error(`dockerd did not answer within ${READY_TIMEOUT_MS / 1000} s (log: ${logFile})`);
}
