/**
 * Running ip / ethtool / sysctl and friends: always an argv (execFile, never a shell), always with
 * a timeout, and a LabError with the command and its stderr when it fails.
 */
import { execFile } from "node:child_process";
import { LabError } from "./errors";

/** Default time limit of one command, in milliseconds (ip and sysctl take a few ms). */
export const COMMAND_TIMEOUT_MS = 15_000;

export interface CommandResult {
  stdout: string;
  stderr: string;
  /** Exit code; null when the command was killed (timeout). */
  code: number | null;
}

export interface RunOptions {
  timeoutMs?: number;
  /** Resolve with the result instead of throwing when the exit code is not 0. */
  allowFailure?: boolean;
}

export function runCommand(argv: readonly string[], options: RunOptions = {}): Promise<CommandResult> {
  const [file, ...args] = argv;
  if (!file) return Promise.reject(new LabError("bad_argument", "empty command"));
  const timeout = options.timeoutMs ?? COMMAND_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { timeout, killSignal: "SIGKILL", maxBuffer: 32 * 1024 * 1024, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (!error) return resolve({ stdout, stderr, code: 0 });
        const e = error as NodeJS.ErrnoException & { code?: unknown; killed?: boolean };
        if (e.code === "ENOENT") {
          return reject(new LabError("binary_missing", `${file}: not found`, { argv: [...argv] }));
        }
        const code = typeof e.code === "number" ? e.code : null;
        if (e.killed || code === null) {
          return reject(
            new LabError("timeout", `${argv.join(" ")}: no exit within ${timeout} ms`, { argv: [...argv] }),
          );
        }
        if (options.allowFailure) return resolve({ stdout, stderr, code });
        reject(
          new LabError("command_failed", `${argv.join(" ")}: exit ${code}: ${stderr.trim()}`, {
            argv: [...argv],
            code,
            stderr,
          }),
        );
      },
    );
  });
}

/** `ip netns exec <namespace> argv...` */
export function runInNamespace(
  namespace: string,
  argv: readonly string[],
  options: RunOptions = {},
): Promise<CommandResult> {
  return runCommand(["ip", "netns", "exec", namespace, ...argv], options);
}

/** Network namespaces that exist now (`ip netns list`). */
export async function listNamespaces(): Promise<string[]> {
  const { stdout } = await runCommand(["ip", "netns", "list"]);
  return parseNetnsList(stdout);
}

/** `ip netns list` prints "name" or "name (id: 3)" per line. */
export function parseNetnsList(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim().split(/\s+/)[0] ?? "")
    .filter((n) => n.length > 0);
}

/** Pids of the processes living in a namespace (`ip netns pids`). */
export async function namespacePids(namespace: string): Promise<number[]> {
  const { stdout } = await runCommand(["ip", "netns", "pids", namespace], { allowFailure: true });
  return stdout
    .split(/\s+/)
    .filter((s) => /^\d+$/.test(s))
    .map(Number);
}
