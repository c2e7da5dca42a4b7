/**
 * Processes the lab starts and must be able to stop from another process (the CLI's `down`, or a
 * later `up` cleaning a crashed run). Each is recorded with its pid and the kernel's start time,
 * so a recycled pid is never mistaken for it.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { LabError } from "./errors";

export const LabProcessKind = z
  .enum(["director", "redirect", "test-server", "agent", "client-load"])
  .describe(
    "What the process is: tide-director, tide-redirect, a proxy's test server, a host's tide-agent " +
      "(console mode) or the client's background load",
  );
export type LabProcessKind = z.infer<typeof LabProcessKind>;

export const LabProcessRecord = z
  .strictObject({
    key: z.string().describe("Unique name in the lab: dir1, prx1.redirect, prx1.server"),
    kind: LabProcessKind,
    node: z.string().describe("Node it serves (dir1, prx2)"),
    pid: z.int().min(1).describe("Process id"),
    startTime: z.int().min(0).describe("Start time in clock ticks since boot (/proc/<pid>/stat field 22)"),
    argv: z.array(z.string()).describe("Command line it was started with"),
    log: z.string().describe("File receiving its stdout and stderr"),
    cwd: z.string().optional().describe("Working directory it was started in (absent: the lab's caller's)"),
    env: z
      .record(z.string(), z.string())
      .optional()
      .describe("Its whole environment when not inherited (an agent's: PATH and LANG; never a secret)"),
  })
  .describe("A process the lab started");
export type LabProcessRecord = z.infer<typeof LabProcessRecord>;

/** Start time (field 22) and state (field 3) of /proc/<pid>/stat, or null if there is no such process. */
export function readProcStat(pid: number): { startTime: number; state: string } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  return parseProcStat(text);
}

/** The command name (field 2) may hold spaces and parentheses: fields restart after the last ")". */
export function parseProcStat(text: string): { startTime: number; state: string } | null {
  const close = text.lastIndexOf(")");
  if (close < 0) return null;
  const fields = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  // fields[0] is field 3 (state); field 22 (starttime) is fields[19].
  const state = fields[0];
  const start = fields[19];
  if (state === undefined || start === undefined || !/^\d+$/.test(start)) return null;
  return { startTime: Number(start), state };
}

export function isAlive(record: Pick<LabProcessRecord, "pid" | "startTime">): boolean {
  const stat = readProcStat(record.pid);
  return stat !== null && stat.startTime === record.startTime && stat.state !== "Z" && stat.state !== "X";
}

/**
 * Starts a process that outlives the caller (the CLI exits after `up`): its own process group,
 * stdout+stderr appended to `log`, no stdin.
 */
export function spawnDetached(
  spec: Omit<LabProcessRecord, "pid" | "startTime" | "cwd" | "env">,
  cwd?: string,
  env?: Record<string, string>,
): LabProcessRecord {
  const [file, ...args] = spec.argv;
  if (!file) throw new LabError("bad_argument", `${spec.key}: empty command`);
  const fd = openSync(spec.log, "a");
  try {
    const child = spawn(file, args, { detached: true, stdio: ["ignore", fd, fd], cwd, env });
    child.on("error", () => {
      /* reported by the readiness checks (the process is not alive) */
    });
    child.unref();
    if (child.pid === undefined) throw new LabError("process_exited", `${spec.key}: could not start ${file}`);
    const stat = readProcStat(child.pid);
    // cwd and env are recorded so `lab restart` starts it again exactly as it was.
    return {
      ...spec,
      pid: child.pid,
      startTime: stat?.startTime ?? 0,
      ...(cwd === undefined ? {} : { cwd }),
      ...(env === undefined ? {} : { env }),
    };
  } finally {
    closeSync(fd);
  }
}

/** Starts a recorded process again: the same argv, log, working directory and environment. */
export function respawn(record: LabProcessRecord): LabProcessRecord {
  const { pid: _pid, startTime: _start, cwd, env, ...spec } = record;
  return spawnDetached(spec, cwd, env);
}

/**
 * SIGTERM, wait up to graceMs for it to go, then SIGKILL. Returns true if it had to be killed.
 * With `group`, the process group is signalled (spawnDetached makes the process its group's
 * leader): an agent's helpers (tide-probes, tide-nsdiag) go with it.
 */
export async function stopProcess(
  record: Pick<LabProcessRecord, "pid" | "startTime">,
  graceMs = 5_000,
  group = false,
): Promise<boolean> {
  if (!isAlive(record)) return false;
  signal(record.pid, "SIGTERM", group);
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isAlive(record)) {
      // The leader is gone; helpers that ignored SIGTERM must not outlive it.
      if (group) signal(record.pid, "SIGKILL", true);
      return false;
    }
    await sleep(25);
  }
  signal(record.pid, "SIGKILL", group);
  for (let i = 0; i < 40 && isAlive(record); i++) await sleep(25);
  return true;
}

/** Stops any process by pid (no start time known: the namespace's own residents). */
export async function stopPid(pid: number, graceMs = 3_000): Promise<void> {
  const stat = readProcStat(pid);
  if (!stat) return;
  await stopProcess({ pid, startTime: stat.startTime }, graceMs);
}

function signal(pid: number, sig: NodeJS.Signals, group = false): void {
  try {
    process.kill(group ? -pid : pid, sig);
  } catch {
    /* already gone */
  }
}

/** The last `bytes` of a log file, for error messages. */
export function logTail(file: string, bytes = 2_000): string {
  try {
    const text = readFileSync(file, "utf8");
    return text.slice(-bytes);
  } catch {
    return "";
  }
}
