import { readFile } from "node:fs/promises";
import { release } from "node:os";
import type { Server } from "node:http";
import {
  AGENT_PROTOCOL_VERSION,
  AgentHealthReply,
  type DataPlaneState,
  type DesiredState,
  type Observation,
} from "@tide/contracts";
import { BccTools } from "./bcc/bcc-tools";
import { checkoutRoots, findHelper, INSTALLED_HELPER_DIR } from "./binaries";
import type { AgentConfig } from "./config";
import { consoleFetch, type ConsoleFetch } from "./console/console-fetch";
import { ConsoleLink, redact, type ConsoleLinkOptions } from "./console/console-link";
import { directorState, redirectState } from "./dataplane/data-plane-state";
import { DirectorReconciler } from "./dataplane/director-reconciler";
import { HealthChecker } from "./health/health-checker";
import { HealthcheckClient } from "./health/healthcheck-client";
import { renderMetrics } from "./metrics/exposition";
import { serveMetrics } from "./metrics/server";
import { mergeTargets, PmtuProber, type PmtuTarget } from "./pmtu/prober";
import { ProbeLoader } from "./probes/loader";
import { HostSampler } from "./sampling/namespace-sampler";
import { buildObservation, MonotonicClock, openListenerKeys } from "./sampling/observation";
import { AGENT_VERSION } from "./version";

/** One sampling cycle's result. */
export interface Tick {
  observation: Observation;
  dataPlane: DataPlaneState[];
  errors: { inode: number; error: string }[];
}

/**
 * Sampling without any link: namespaces, CPUs, probes, data plane. Used by the daemon, `doctor`,
 * and the lab test.
 */
export class HostObserver {
  readonly sampler: HostSampler;
  readonly probes: ProbeLoader;
  /** Path MTU checks run in the background; each tick copies the latest results. */
  readonly pmtu: PmtuProber;
  /** bcc tools, when installed and able to run; off with a reason otherwise. */
  readonly bcc: BccTools;
  private readonly clock = new MonotonicClock();
  private readonly kernelRelease = release();

  constructor(
    private readonly config: AgentConfig,
    log: (line: string) => void = () => undefined,
  ) {
    this.sampler = new HostSampler({
      nsdiagBinary: config.nsdiagBinary ?? null,
      namespaces: config.namespaces,
      log,
    });
    this.probes = new ProbeLoader(config.probesBinary, config.sampleIntervalMs, log, {
      pinDir: config.probesPinDir,
    });
    this.pmtu = new PmtuProber({ intervalMs: config.pmtuIntervalMs, log });
    this.bcc = new BccTools({ enabled: config.bcc, release: this.kernelRelease, log });
  }

  start(): Promise<void> {
    this.setPmtuTargets([]);
    this.bcc.start();
    return this.probes.start();
  }

  /** Configured targets plus the console's desired ones. */
  setPmtuTargets(desired: PmtuTarget[]): void {
    this.pmtu.setTargets(mergeTargets(this.config.pmtuTargets, this.config.pmtuSizes, desired));
  }

  async dataPlane(): Promise<DataPlaneState[]> {
    const out: Promise<DataPlaneState>[] = [];
    if (this.config.directorSocket !== null) out.push(directorState(this.config.directorSocket));
    if (this.config.redirectSocket !== null)
      out.push(redirectState(this.config.redirectSocket, { pinDir: this.config.redirectPinDir }));
    return Promise.all(out);
  }

  async tick(): Promise<Tick> {
    const [sample, dataPlane] = await Promise.all([this.sampler.sample(), this.dataPlane()]);
    const observation = buildObservation({
      hostId: this.config.hostname,
      agentVersion: AGENT_VERSION,
      kernelRelease: this.kernelRelease,
      sampledAt: this.clock.next(),
      sample,
      probes: this.probes.state.probes(),
      probeResults: this.probes.state.probeResults(openListenerKeys(sample)),
      paths: this.pmtu.results(),
    });
    observation.bcc = this.bcc.results();
    return { observation, dataPlane, errors: sample.errors };
  }

  stop(): void {
    this.pmtu.stop();
    this.bcc.stop();
    this.probes.stop();
    this.sampler.close();
  }
}

/** What the agent is doing, reported after each sample (systemd's READY=1 and STATUS=: systemd/status.ts). */
export interface AgentProgress {
  /** The name the agent reports (config hostname). */
  hostname: string;
  /** Samples taken since start. */
  samples: number;
  /** null = local-only. */
  console: {
    /** The console the link sends to. */
    url: string;
    /** Batches the console stored since start. */
    delivered: number;
    /** Why the last attempt failed (console-link.ts), null while the console answers. */
    failing: ConsoleLink["failing"];
    /** Samples waiting in the buffer. */
    buffered: number;
    lastError: string | null;
  } | null;
}

export interface AgentHooks extends Pick<ConsoleLinkOptions, "onDelivered"> {
  /** After each sample, once its delivery attempt (if any) is over. */
  onProgress?: (progress: AgentProgress) => void;
}

/** The daemon: sample every interval, serve /metrics, talk to the console when configured. */
export class Agent {
  private readonly observer: HostObserver;
  private link: ConsoleLink | null = null;
  /** The console link (null when local-only): its buffer, connected state and last error. */
  get consoleLink(): ConsoleLink | null {
    return this.link;
  }
  private metrics: Server | null = null;
  /** The console's HTTP client (consoleFetch: trusts caFile or the system's CAs). */
  private fetch: ConsoleFetch | null = null;
  private samples = 0;
  private delivered = 0;
  private timer: NodeJS.Timeout | null = null;
  private latest: Tick | null = null;
  private running = false;
  private intervalMs: number;
  /** On a director host with a console: keeps the director serving the desired tables. */
  private reconciler: DirectorReconciler | null = null;
  /** On a director host with a console: checks the proxies of the pools its director serves. */
  private health: { checker: HealthChecker; client: HealthcheckClient } | null = null;

  constructor(
    private readonly config: AgentConfig,
    private readonly log: (line: string) => void,
    private readonly hooks: AgentHooks = {},
  ) {
    this.observer = new HostObserver(config, log);
    this.intervalMs = config.sampleIntervalMs;
  }

  async start(): Promise<void> {
    await this.observer.start();
    if (this.config.consoleUrls.length > 0 && this.config.hostTokenFile !== null) {
      const token = (await readFile(this.config.hostTokenFile, "utf8")).trim();
      const capacity = Math.ceil((this.config.bufferMinutes * 60_000) / this.config.sampleIntervalMs);
      this.fetch = consoleFetch({ caFile: this.config.caFile });
      this.link = new ConsoleLink({
        fetch: this.fetch,
        consoleUrls: this.config.consoleUrls,
        token,
        bufferCapacity: capacity,
        bufferMaxBytes: this.config.bufferMaxMiB * 1024 * 1024,
        spoolDir: this.config.spoolDir,
        log: this.log,
        hello: () => ({
          protocolVersion: AGENT_PROTOCOL_VERSION,
          agentVersion: AGENT_VERSION,
          hostname: this.config.hostname,
          kernelRelease: release(),
          roles: this.config.roles,
          probes: this.observer.probes.state.probes(),
          dataPlane: this.latest?.dataPlane ?? [],
        }),
        onDesired: (d) => this.applyDesired(d),
        onDelivered: (batch) => {
          this.delivered++;
          this.hooks.onDelivered?.(batch);
        },
      });
      const link = this.link;
      await link.open();
      if (this.config.directorSocket !== null && this.config.roles.includes("director")) {
        this.reconciler = new DirectorReconciler({
          socket: this.config.directorSocket,
          tableDir: this.config.tableDir,
          download: (t) => link.downloadTable(t.downloadPath, t.contentHash, this.config.tableDir),
          log: (line) => this.log(redact(line, token)),
        });
        this.reconciler.start();
      }
      if (this.config.roles.includes("director")) this.health = this.startHealthChecks(link, token);
      this.log(
        `${this.config.consoleUrls.length > 1 ? "consoles" : "console"} ${this.config.consoleUrls.join(", ")} as ${this.config.hostname}, TLS trusting ${this.fetch.trust}; buffering up to ${capacity} samples or ${this.config.bufferMaxMiB} MiB while unreachable` +
          (this.config.spoolDir ? `, spooled to ${this.config.spoolDir}` : " (memory only)"),
      );
    } else {
      this.log("no consoleUrl or consoleUrls: running local-only");
    }
    if (this.config.metricsListen !== "") {
      this.metrics = serveMetrics(
        this.config.metricsListen,
        () =>
          renderMetrics(this.latest?.observation ?? null, this.latest?.dataPlane ?? [], {
            bufferedSamples: this.link?.buffer.size ?? 0,
            consoleConnected: this.link === null ? null : this.link.connected,
            consoleUrl: this.link?.consoleUrl ?? null,
            samplesDropped: this.link?.samplesDropped,
            sysctlAgesMs: this.observer.sampler.sysctlAges,
            collector: this.observer.sampler.collectorState(),
          }),
        this.log,
      );
    }
    this.running = true;
    void this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const started = Date.now();
      try {
        const tick = await this.observer.tick();
        this.latest = tick;
        this.samples++;
        for (const e of tick.errors) this.log(`namespace ${e.inode}: ${e.error}`);
        if (this.link !== null)
          void this.link.offer(tick.observation, tick.dataPlane).then(() => this.progress());
        else this.progress();
      } catch (err) {
        this.log(`sampling failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      const wait = Math.max(0, this.intervalMs - (Date.now() - started));
      await new Promise<void>((resolve) => {
        this.timer = setTimeout(resolve, wait);
      });
    }
  }

  private progress(): void {
    if (!this.running || this.hooks.onProgress === undefined) return;
    const link = this.link;
    this.hooks.onProgress({
      hostname: this.config.hostname,
      samples: this.samples,
      console:
        link === null
          ? null
          : {
              url: link.consoleUrl,
              delivered: this.delivered,
              failing: link.failing,
              buffered: link.buffer.size,
              lastError: link.lastError,
            },
    });
  }

  /** Adopt the console's interval and targets and, on a director, the tables it must serve. */
  private applyDesired(desired: DesiredState): Promise<void> {
    this.intervalMs = desired.sampleIntervalMs;
    this.observer.setPmtuTargets(desired.pmtuTargets);
    this.reconciler?.setDesired(desired.revision, desired.directorTables);
    this.health?.checker.setJobs(desired.healthChecks);
    return Promise.resolve();
  }

  /**
   * Health checks of the proxies this director serves, through tide-healthcheck in the director
   * host's namespace (healthNetns). Without the helper the checks are off and the console hears
   * nothing from this director (it never takes silence for failure).
   */
  private startHealthChecks(
    link: ConsoleLink,
    token: string,
  ): { checker: HealthChecker; client: HealthcheckClient } | null {
    const helper = findHelper("tide-healthcheck", this.config.healthcheckBinary, {
      installedDir: INSTALLED_HELPER_DIR,
      checkoutRoots: checkoutRoots(),
    });
    if (helper.path === null) {
      this.log(`proxy health checks off: tide-healthcheck ${helper.detail}`);
      return null;
    }
    const log = (line: string) => this.log(redact(line, token));
    const client = new HealthcheckClient(helper.path, this.config.healthNetns, log);
    const checker = new HealthChecker({
      runner: client,
      log,
      report: async (report) => {
        const reply = AgentHealthReply.loose().parse(await link.call("POST", "/api/v1/agent/health", report));
        for (const c of reply.changed)
          log(`console: proxy ${c.proxyId} is now ${c.healthy ? "healthy" : "unhealthy"} (${c.reason})`);
        for (const i of reply.ignored) log(`console ignored the view of ${i.proxyId}: ${i.reason}`);
      },
    });
    this.log(
      `proxy health checks with ${helper.detail}` +
        (this.config.healthNetns ? ` in namespace ${this.config.healthNetns}` : ""),
    );
    return { checker, client };
  }

  /** Stop sampling and talking to the console; resolves once the spool is written. */
  async stop(): Promise<void> {
    this.running = false;
    this.reconciler?.stop();
    this.health?.checker.stop();
    this.health?.client.stop();
    if (this.timer !== null) clearTimeout(this.timer);
    const metrics = this.metrics;
    this.metrics = null;
    // Its port is free once this resolves: a reload (cli/daemon.ts) listens on it again at once.
    const metricsClosed = new Promise<void>((resolve) => {
      if (metrics === null) resolve();
      else {
        metrics.close(() => resolve());
        metrics.closeAllConnections();
      }
    });
    this.observer.stop();
    await this.link?.close();
    this.fetch?.close();
    await metricsClosed;
  }
}
