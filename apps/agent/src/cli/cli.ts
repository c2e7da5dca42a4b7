import { configFromEnv, readConfigFile, resolveConfig, type AgentConfig } from "../config";
import type { AgentEnv } from "../env";
import { findHelpers, type HelperChoice } from "../binaries";
import { runEnroll } from "../enroll/enroll";
import { SystemdNotify } from "../systemd/notify";
import { ConfigError, Daemon } from "./daemon";
import { formatDoctor, nodeBpfStatus, runDoctor } from "./doctor";

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: AgentEnv;
}

const USAGE = `usage: tide-agent [run] [--config FILE]   SIGHUP reloads FILE
       tide-agent doctor [--seconds N] [--json] [--config FILE]
       tide-agent sample [--config FILE]        print one observation as JSON
       tide-agent enroll <console URL> --token tide_enroll_… [--config FILE] [--token-file FILE]
                         [--ca-file FILE] [--force] [--no-start]
`;

interface Parsed {
  command: "run" | "doctor" | "sample" | "help";
  config: string | null;
  seconds: number;
  json: boolean;
}

export function parseArgs(argv: readonly string[]): Parsed {
  const out: Parsed = { command: "run", config: null, seconds: 3, json: false };
  const args = [...argv];
  if (args[0] !== undefined && !args[0].startsWith("-")) {
    const c = args.shift()!;
    if (c !== "run" && c !== "doctor" && c !== "sample" && c !== "help")
      throw new Error(`unknown command ${c}`);
    out.command = c;
  }
  while (args.length > 0) {
    const a = args.shift()!;
    if (a === "--config") out.config = args.shift() ?? null;
    else if (a === "--json") out.json = true;
    else if (a === "--seconds") {
      const n = Number(args.shift());
      if (!Number.isInteger(n) || n < 1 || n > 600) throw new Error("--seconds takes a whole number 1..600");
      out.seconds = n;
    } else if (a === "-h" || a === "--help") out.command = "help";
    else throw new Error(`unknown option ${a}`);
  }
  if (out.config === "") throw new Error("--config needs a file");
  return out;
}

function loadConfig(parsed: Parsed, env: AgentEnv): AgentConfig {
  const file = parsed.config ?? env.TIDE_AGENT_CONFIG ?? null;
  return resolveConfig([file !== null ? readConfigFile(file) : {}, configFromEnv(env)]);
}

/**
 * `doctor` and `sample` on a host with no config: the helpers the config leaves out are looked for
 * where packages install them, then in the checkout's dataplane/build, so a first run has real
 * probes and one nsdiag process instead of "off: no probesBinary configured".
 */
export function withFoundHelpers(config: AgentConfig): { config: AgentConfig; helpers: HelperChoice[] } {
  const found = findHelpers(config);
  return {
    config: { ...config, probesBinary: found.probes.path, nsdiagBinary: found.nsdiag.path },
    helpers: [found.probes, found.nsdiag],
  };
}

/** Returns the exit code, or null when the daemon keeps running. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number | null> {
  if (argv[0] === "enroll") return runEnroll(argv.slice(1), io);
  let parsed: Parsed;
  let config: AgentConfig;
  try {
    parsed = parseArgs(argv);
    if (parsed.command === "help") {
      io.stdout(USAGE);
      return 0;
    }
    config = loadConfig(parsed, io.env);
  } catch (err) {
    io.stderr(`tide-agent: ${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    return 2;
  }
  const log = (line: string): void => io.stderr(`${new Date().toISOString()} ${line}\n`);
  if (parsed.command === "doctor") {
    const { config: found, helpers } = withFoundHelpers(config);
    const report = await runDoctor(found, parsed.seconds, log);
    io.stdout(
      parsed.json
        ? JSON.stringify({ findings: report.findings }, null, 2) + "\n"
        : formatDoctor(report.findings, report.observations, {
            helpers,
            collector: report.collector,
            bpfMaps: report.bpfMaps,
            nodeBpf: nodeBpfStatus(),
          }),
    );
    return 0;
  }
  if (parsed.command === "sample") {
    const { HostObserver } = await import("../agent");
    const { config: found, helpers } = withFoundHelpers(config);
    for (const h of helpers) log(`${h.name}: ${h.detail}`);
    const observer = new HostObserver(found, log);
    await observer.start();
    try {
      const tick = await observer.tick();
      io.stdout(JSON.stringify({ observation: tick.observation, dataPlane: tick.dataPlane }, null, 2) + "\n");
    } finally {
      observer.stop();
    }
    return 0;
  }
  return runDaemon(config, () => loadConfig(parsed, io.env), io, log);
}

/**
 * `run`: the agent until SIGTERM/SIGINT; SIGHUP reloads the configuration (cli/daemon.ts). Returns
 * 2 when the configuration cannot run (the unit's RestartPreventExitStatus), 1 when the start
 * failed otherwise, null once running.
 */
async function runDaemon(
  config: AgentConfig,
  load: () => AgentConfig,
  io: CliIo,
  log: (line: string) => void,
): Promise<number | null> {
  const notify = new SystemdNotify({ socket: io.env.NOTIFY_SOCKET, log });
  const daemon = new Daemon(config, { load, log, notify });
  const stop = (): void => {
    log("stopping");
    // Exit once the spool is written; a stuck disk does not hold the stop up more than 5 s.
    setTimeout(() => process.exit(0), 5_000).unref();
    void daemon.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log(`stopping: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  process.on("SIGHUP", () => {
    log("SIGHUP: reloading the configuration");
    daemon.reload().catch((err: unknown) => {
      // Neither the new configuration nor the previous one could start again: a restart may.
      log(`reload failed, exiting: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    });
  });
  // The handlers are in place first: a signal during start-up waits for it (SIGHUP's default
  // action would end the process).
  try {
    await daemon.start();
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    io.stderr(
      `tide-agent: ${err instanceof ConfigError ? "invalid configuration: " : "cannot start: "}${text}\n`,
    );
    await notify.idle();
    return err instanceof ConfigError ? 2 : 1;
  }
  return null;
}
