import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentHooks } from "../agent";
import { readConfigFile, resolveConfig, type AgentConfig } from "../config";
import { runCli } from "./cli";
import { changedKeys, ConfigError, Daemon, preflight, type RunningAgent } from "./daemon";

/** The daemon with fake agents and a notifier that records what it would send. */

let dir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "tide-daemon-"));
  file = path.join(dir, "agent.json");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const write = (config: Record<string, unknown>): void => writeFileSync(file, JSON.stringify(config));
const load = (): AgentConfig => resolveConfig([readConfigFile(file)]);
const BASE = { hostname: "lb-01", metricsListen: "", spoolDir: "" };

class FakeAgent implements RunningAgent {
  events: string[];
  constructor(
    readonly config: AgentConfig,
    readonly hooks: AgentHooks,
    events: string[],
  ) {
    this.events = events;
  }
  start(): Promise<void> {
    this.events.push(`start ${this.config.sampleIntervalMs}`);
    if (this.config.hostname === "cannot-start") return Promise.reject(new Error("spool is locked"));
    return Promise.resolve();
  }
  stop(): Promise<void> {
    this.events.push(`stop ${this.config.sampleIntervalMs}`);
    return Promise.resolve();
  }
  /** The agent took a sample (local-only): the daemon's readiness hears it. */
  sampled(): void {
    this.hooks.onProgress?.({ hostname: this.config.hostname, samples: 1, console: null });
  }
}

function daemonFor(config: AgentConfig) {
  const events: string[] = [];
  const logs: string[] = [];
  const agents: FakeAgent[] = [];
  const said = (what: string) => (s: string) => {
    events.push(`${what} ${s}`);
    return Promise.resolve();
  };
  const daemon = new Daemon(config, {
    load,
    log: (l) => logs.push(l),
    notify: {
      ready: said("READY"),
      status: said("STATUS"),
      reloading: said("RELOADING"),
      stopping: said("STOPPING"),
      idle: () => Promise.resolve(),
    },
    createAgent: (c, _log, hooks) => {
      const a = new FakeAgent(c, hooks, events);
      agents.push(a);
      return a;
    },
  });
  return { daemon, events, logs, agents };
}

const LOCAL = "READY sampling as lb-01, local-only (no consoleUrl): /metrics and doctor only";

describe("Daemon reload", () => {
  it("applies a valid new configuration: the old agent stops, a new one starts, READY once it samples", async () => {
    write({ ...BASE, sampleIntervalMs: 1000 });
    const { daemon, events, logs, agents } = daemonFor(load());
    await daemon.start();
    agents[0]!.sampled();
    write({ ...BASE, sampleIntervalMs: 500 });
    expect(await daemon.reload()).toBe("applied");
    expect(daemon.current.sampleIntervalMs).toBe(500);
    agents[0]!.sampled(); // a late report of the old agent is not the new one's readiness
    expect(events).toEqual([
      "start 1000",
      LOCAL,
      "RELOADING reloading the configuration",
      "stop 1000",
      "start 500",
    ]);
    agents[1]!.sampled();
    expect(events.at(-1)).toBe(LOCAL);
    expect(logs).toEqual([
      "reload: sampleIntervalMs changed; restarting the agent with the new configuration (the spool is kept)",
      "reload: the new configuration is in force",
    ]);
  });

  it("refuses an invalid configuration with the reason and keeps the running agent", async () => {
    write({ ...BASE });
    const { daemon, events, logs, agents } = daemonFor(load());
    await daemon.start();
    agents[0]!.sampled();
    write({ ...BASE, sampleIntervalMs: 5 });
    expect(await daemon.reload()).toBe("refused");
    writeFileSync(file, "{ not json");
    expect(await daemon.reload()).toBe("refused");
    write({
      ...BASE,
      consoleUrl: "https://tide.example.net",
      hostTokenFile: path.join(dir, "missing-token"),
    });
    expect(await daemon.reload()).toBe("refused");
    expect(agents).toHaveLength(1);
    expect(events.filter((e) => e.startsWith("stop"))).toEqual([]);
    expect(events.slice(2)).toEqual([
      "RELOADING reloading the configuration",
      LOCAL,
      "RELOADING reloading the configuration",
      LOCAL,
      "RELOADING reloading the configuration",
      LOCAL,
    ]);
    expect(logs[0]).toMatch(
      /^reload refused: invalid configuration: sampleIntervalMs: .*; the running configuration stays in force$/,
    );
    expect(logs[1]).toMatch(/^reload refused: .*JSON.*; the running configuration stays in force$/);
    expect(logs[2]).toMatch(/^reload refused: hostTokenFile .*missing-token: ENOENT/);
    expect(daemon.current.sampleIntervalMs).toBe(1000);
  });

  it("says when nothing changed, and goes back to the old configuration when the new one cannot start", async () => {
    write({ ...BASE });
    const { daemon, events, logs, agents } = daemonFor(load());
    await daemon.start();
    expect(await daemon.reload()).toBe("unchanged");
    write({ ...BASE, hostname: "cannot-start", sampleIntervalMs: 2000 });
    expect(await daemon.reload()).toBe("refused");
    expect(agents.map((a) => a.config.hostname)).toEqual(["lb-01", "cannot-start", "lb-01"]);
    expect(events.filter((e) => /^(start|stop)/.test(e))).toEqual([
      "start 1000",
      "stop 1000",
      "start 2000",
      "stop 2000",
      "start 1000",
    ]);
    expect(logs).toContain("reload: the configuration is unchanged");
    expect(logs.at(-1)).toBe(
      "reload refused: it failed to start: spool is locked; the running configuration stays in force",
    );
    expect(daemon.current.hostname).toBe("lb-01");
  });

  it("stops with STOPPING=1 after a reload under way", async () => {
    write({ ...BASE });
    const { daemon, events } = daemonFor(load());
    await daemon.start();
    write({ ...BASE, sampleIntervalMs: 700 });
    const reloaded = daemon.reload();
    await daemon.stop();
    expect(await reloaded).toBe("applied");
    expect(events.slice(-2)).toEqual(["STOPPING stopping: writing the spool", "stop 700"]);
    expect(await daemon.reload()).toBe("refused");
  });
});

describe("Daemon start", () => {
  it("holds a reload asked for during start-up until it is done, and drops it when the start failed", async () => {
    write({ ...BASE });
    const { daemon, events } = daemonFor(load());
    const started = daemon.start();
    write({ ...BASE, sampleIntervalMs: 600 });
    const reloaded = daemon.reload();
    await started;
    expect(await reloaded).toBe("applied");
    expect(events.filter((e) => /^(start|stop)/.test(e))).toEqual(["start 1000", "stop 1000", "start 600"]);

    write({ ...BASE, hostname: "cannot-start" });
    const failing = daemonFor(load());
    const start = failing.daemon.start();
    const queued = failing.daemon.reload();
    await expect(start).rejects.toThrow("spool is locked");
    expect(await queued).toBe("refused");
    expect(failing.agents).toHaveLength(1);
  });
});

describe("preflight and changedKeys", () => {
  it("refuses a missing or empty host token file and an unreadable caFile as configuration errors", () => {
    const token = path.join(dir, "host-token");
    const c = (extra: Record<string, unknown>) =>
      resolveConfig([{ ...BASE, consoleUrl: "https://tide.example.net", hostTokenFile: token, ...extra }]);
    expect(() => preflight(c({}))).toThrow(ConfigError);
    writeFileSync(token, "\n");
    expect(() => preflight(c({}))).toThrow(/host-token is empty/);
    writeFileSync(token, "tide_host_x\n");
    expect(() => preflight(c({}))).not.toThrow();
    expect(() => preflight(c({ caFile: path.join(dir, "ca.pem") }))).toThrow(/caFile .*ca\.pem: ENOENT/);
    expect(changedKeys(c({}), c({ roles: ["proxy"], sampleIntervalMs: 500 }))).toEqual([
      "roles",
      "sampleIntervalMs",
    ]);
  });
});

describe("tide-agent run: exit code 2 for a configuration it cannot run with", () => {
  const run = async (argv: string[]) => {
    let stderr = "";
    const code = await runCli(argv, { stdout: () => undefined, stderr: (t) => (stderr += t), env: {} });
    return { code, stderr };
  };

  it("an invalid file, a missing file, a missing host token file", async () => {
    write({ ...BASE, sampleIntervalMs: 5 });
    expect(await run(["run", "--config", file])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/sampleIntervalMs/),
    });
    expect((await run(["run", "--config", path.join(dir, "none.json")])).code).toBe(2);
    write({ ...BASE, consoleUrl: "https://tide.example.net", hostTokenFile: path.join(dir, "host-token") });
    const r = await run(["run", "--config", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^tide-agent: invalid configuration: hostTokenFile .*host-token: ENOENT/);
  });
});
