/**
 * A Docker engine owned by the compose tier, that leaves the host as it found it: no iptables
 * rules, no docker0 bridge, no ip_forward (`--iptables=false --ip6tables=false --bridge=none
 * --ip-forward=false`; builds and services use host networking), its own socket, pid file and
 * exec root in a temp dir, an empty config file (the host's /etc/docker/daemon.json does not apply)
 * and its own cgroup parent. A default dockerd would set FORWARD to DROP, add NAT chains and
 * docker0 and turn on bridge netfilter, which breaks the network-namespace lab.
 * The data root (images, build cache, volumes) is kept between runs for warm builds.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";

const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
/** cgroup parent of every container of this engine (removed when it stops). */
const CGROUP_PARENT = "tide-compose-tier";

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
  writeFileSync(configFile, "{}\n");
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
    for (const controller of ["", ...readdirSafe("/sys/fs/cgroup")]) {
      try {
        rmdirSync(path.join("/sys/fs/cgroup", controller, CGROUP_PARENT));
      } catch {
        // not there (or not empty: reported by the host check if it matters)
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

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
