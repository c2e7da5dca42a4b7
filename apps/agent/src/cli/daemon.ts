import { readFileSync } from "node:fs";
import { Agent, type AgentHooks } from "../agent";
import type { AgentConfig } from "../config";
import { loadTrust } from "../console/console-fetch";
import type { SystemdNotify } from "../systemd/notify";
import { Readiness } from "../systemd/status";

/**
 * `tide-agent run`: one Agent at a time, systemd's readiness around it, and the reload (SIGHUP,
 * `systemctl reload tide-agent`): the configuration is read again and, when valid and different,
 * the running Agent is stopped cleanly (its spool written and unlocked) and a new one started with
 * it, which replays that spool; the process does not exit. An invalid one is refused with the
 * reason and the running one goes on.
 */

/** A configuration the agent cannot run with: exit code 2 at start-up (the unit does not restart). */
export class ConfigError extends Error {}

/** What the daemon runs (the Agent; tests give a fake). */
export interface RunningAgent {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface DaemonOptions {
  /** Reads and validates the configuration (file, then environment); throws a readable error. */
  load: () => AgentConfig;
  log: (line: string) => void;
  notify: Pick<SystemdNotify, "ready" | "status" | "reloading" | "stopping" | "idle">;
  createAgent?: (config: AgentConfig, log: (line: string) => void, hooks: AgentHooks) => RunningAgent;
}

export type ReloadResult = "applied" | "unchanged" | "refused";

/**
 * What the Agent would only find out once started, checked first: the host token file (readable,
 * not empty) and caFile (readable PEM). A reload that fails here keeps the running agent.
 */
export function preflight(config: AgentConfig): void {
  if (config.consoleUrls.length > 0 && config.hostTokenFile !== null) {
    let token: string;
    try {
      token = readFileSync(config.hostTokenFile, "utf8").trim();
    } catch (err) {
      throw new ConfigError(`hostTokenFile ${config.hostTokenFile}: ${(err as Error).message}`);
    }
    if (token === "") throw new ConfigError(`hostTokenFile ${config.hostTokenFile} is empty`);
  }
  try {
    loadTrust({ caFile: config.caFile });
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

/** Top-level keys whose values differ (said in the reload's log line). */
export function changedKeys(a: AgentConfig, b: AgentConfig): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]) as Set<keyof AgentConfig>;
  return [...keys].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k])).sort();
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export class Daemon {
  private agent: RunningAgent | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly readiness: Readiness;
  private stopped = false;

  constructor(
    private config: AgentConfig,
    private readonly o: DaemonOptions,
  ) {
    this.readiness = new Readiness(o.notify);
  }

  /** The configuration in force. */
  get current(): AgentConfig {
    return this.config;
  }

  /**
   * Start the first agent. Throws ConfigError for a configuration it cannot run with. A reload or
   * stop asked for meanwhile (a signal during start-up) waits for it.
   */
  start(): Promise<void> {
    const started = this.chain.then(async () => {
      try {
        preflight(this.config);
        this.agent = await this.launch(this.config);
      } catch (err) {
        // The process is exiting: a reload queued behind the start must not start an agent.
        this.stopped = true;
        throw err;
      }
    });
    this.chain = started.catch(() => undefined);
    return started;
  }

  /** Read the configuration again and apply it (queued behind a reload or stop under way). */
  reload(): Promise<ReloadResult> {
    const next = this.chain.then(() => this.reloadNow());
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** STOPPING=1, then stop the agent (its spool written); after a reload under way. */
  stop(): Promise<void> {
    const next = this.chain.then(async () => {
      this.stopped = true;
      void this.o.notify.stopping("stopping: writing the spool");
      await this.agent?.stop();
      this.agent = null;
      await this.o.notify.idle();
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async launch(config: AgentConfig): Promise<RunningAgent> {
    const create =
      this.o.createAgent ??
      ((c: AgentConfig, log: (l: string) => void, h: AgentHooks) => new Agent(c, log, h));
    const agent: RunningAgent = create(config, this.o.log, {
      // A late report of an agent already replaced is not this one's readiness.
      onProgress: (p) => {
        if (this.agent === agent) this.readiness.update(p);
      },
    });
    this.agent = agent;
    this.readiness.reset();
    try {
      await agent.start();
    } catch (err) {
      this.agent = null;
      await agent.stop().catch(() => undefined);
      throw err;
    }
    return agent;
  }

  private async reloadNow(): Promise<ReloadResult> {
    if (this.stopped) return "refused";
    void this.o.notify.reloading("reloading the configuration");
    const keepGoing = (why: string): ReloadResult => {
      this.o.log(`reload refused: ${why}; the running configuration stays in force`);
      void this.o.notify.ready(this.readiness.lastStatus || "running the previous configuration");
      return "refused";
    };
    let next: AgentConfig;
    try {
      next = this.o.load();
      preflight(next);
    } catch (err) {
      return keepGoing(message(err));
    }
    const changed = changedKeys(this.config, next);
    if (changed.length === 0) {
      this.o.log("reload: the configuration is unchanged");
      void this.o.notify.ready(this.readiness.lastStatus || "running");
      return "unchanged";
    }
    this.o.log(
      `reload: ${changed.join(", ")} changed; restarting the agent with the new configuration (the spool is kept)`,
    );
    await this.agent?.stop();
    this.agent = null;
    try {
      this.agent = await this.launch(next);
    } catch (err) {
      this.o.log(
        `reload: the new configuration failed to start (${message(err)}); going back to the previous one`,
      );
      this.agent = await this.launch(this.config);
      return keepGoing(`it failed to start: ${message(err)}`);
    }
    this.config = next;
    this.o.log("reload: the new configuration is in force");
    return "applied";
  }
}
