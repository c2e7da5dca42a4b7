import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/**
 * `tide-agent run` as a process, as systemd runs it (Type=notify): a local-only configuration,
 * NOTIFY_SOCKET pointing at a datagram socket this test listens on (a small Python listener that
 * plays the manager, closing the fd of each BARRIER=1 the way systemd does), and the real
 * systemd-notify. Then SIGHUP with a valid and with an invalid configuration, and SIGTERM.
 */

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));

/** Receives sd_notify datagrams on argv[1]; appends each to argv[2] (fields tab-separated). */
const LISTENER = `
import array, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[2], "a").close()
while True:
    msg, anc, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(16 * 4))
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds = array.array("i")
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
            for fd in fds:
                os.close(fd)  # the barrier: systemd-notify waits until every copy of its pipe is closed
    with open(sys.argv[2], "a") as f:
        f.write(msg.decode().strip().replace("\\n", "\\t") + "\\n")
`;

let dir: string;
let messages: string;
const children: ChildProcess[] = [];

/** The environment of this test without TIDE_* (a developer's shell may set some). */
function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("TIDE_")) env[k] = v;
  return { ...env, ...extra };
}

async function until(what: string, cond: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const notified = (): string[] =>
  existsSync(messages)
    ? readFileSync(messages, "utf8")
        .split("\n")
        .filter((l) => l !== "" && l !== "BARRIER=1")
    : [];

function agent(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN, ...args], {
    env: cleanEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const out = { stderr: "", code: null as number | null, signal: null as string | null, exited: false };
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (c: string) => (out.stderr += c));
  child.on("exit", (code, signal) => {
    out.code = code;
    out.signal = signal;
    out.exited = true;
  });
  return { child, out };
}

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "tide-run-"));
  messages = path.join(dir, "notify.txt");
});
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

describe("tide-agent run under a Type=notify manager", () => {
  it("is ready after its first sample, reloads on SIGHUP (or refuses and goes on), stops on SIGTERM", async () => {
    if (spawnSync("systemd-notify", ["--version"]).status !== 0)
      throw new Error("systemd-notify is required");
    const socketPath = path.join(dir, "notify.sock");
    writeFileSync(path.join(dir, "listener.py"), LISTENER);
    const listener = spawn("python3", [path.join(dir, "listener.py"), socketPath, messages], {
      stdio: "inherit",
    });
    children.push(listener);
    await until("the listener", () => existsSync(messages));

    const file = path.join(dir, "agent.json");
    const base = { hostname: "lb-run-01", metricsListen: "", spoolDir: "", bcc: false };
    writeFileSync(file, JSON.stringify({ ...base, sampleIntervalMs: 500 }));
    const { child, out } = agent(["run", "--config", file], { NOTIFY_SOCKET: socketPath });
    const ready =
      "READY=1\tSTATUS=sampling as lb-run-01, local-only (no consoleUrl): /metrics and doctor only";
    await until("READY=1", () => notified().includes(ready));

    writeFileSync(file, JSON.stringify({ ...base, sampleIntervalMs: 1000 }));
    child.kill("SIGHUP");
    await until("the reload", () => out.stderr.includes("reload: the new configuration is in force"));
    await until("READY=1 after the reload", () => notified().filter((m) => m === ready).length === 2);
    expect(out.stderr).toContain(
      "reload: sampleIntervalMs changed; restarting the agent with the new configuration",
    );

    writeFileSync(file, JSON.stringify({ ...base, sampleIntervalMs: 5 }));
    child.kill("SIGHUP");
    await until("the refusal", () => out.stderr.includes("reload refused:"));
    expect(out.stderr).toMatch(
      /reload refused: invalid configuration: sampleIntervalMs: [^\n]*; the running configuration stays in force/,
    );
    await until("READY=1 after the refusal", () => notified().filter((m) => m === ready).length === 3);
    expect(out.exited).toBe(false);

    child.kill("SIGTERM");
    await until("the exit", () => out.exited, 10_000);
    expect(out.code).toBe(0);
    const m = notified();
    expect(m.filter((x) => x.startsWith("RELOADING=1\tMONOTONIC_USEC="))).toHaveLength(2);
    expect(m.at(-1)).toBe("STOPPING=1\tSTATUS=stopping: writing the spool");
    expect(m[0]).toBe(ready);
  }, 60_000);

  it("exits 2 on a bad configuration or environment at start-up (RestartPreventExitStatus=2)", async () => {
    const file = path.join(dir, "agent.json");
    writeFileSync(file, JSON.stringify({ sampleIntervalMs: 5 }));
    const bad = agent(["run", "--config", file], {});
    writeFileSync(path.join(dir, "ok.json"), JSON.stringify({ metricsListen: "" }));
    const badEnv = agent(["run", "--config", path.join(dir, "ok.json")], {
      TIDE_SAMPLE_INTERVAL_MS: "often",
    });
    await until("both exits", () => bad.out.exited && badEnv.out.exited);
    expect(bad.out.code).toBe(2);
    expect(bad.out.stderr).toMatch(/invalid configuration: sampleIntervalMs/);
    expect(badEnv.out.code).toBe(2);
    expect(badEnv.out.stderr).toMatch(/^tide-agent: invalid environment: TIDE_SAMPLE_INTERVAL_MS: /);
  }, 30_000);
});
