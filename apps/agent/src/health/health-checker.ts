import {
  HEALTH_REPORT_EVERY_MS,
  type AgentHealthReport,
  type HealthCheckJob,
  type HealthCheckOutcome,
  type HealthcheckRequest,
  type HealthcheckResult,
  type ProxyHealthView,
} from "@tide/contracts";
import { ThrottledLog } from "../console/delivery";

/**
 * Health checks of the proxies a director serves (issue 12 item 1), run by the agent of a director
 * host: each pool's proxies every intervalMs, each round the GUE check and the pool's HTTP or TCP
 * check at once (tide-healthcheck, healthcheck-client.ts); a round passes when all its checks pass.
 * A proxy is up after `rise` passing rounds in a row and down after `fall` failing ones, as
 * glb-healthcheck does. The console gets this director's views at once when one flips, and every
 * HEALTH_REPORT_EVERY_MS anyway (so it can tell a silent director from a healthy one); it combines
 * all directors' views into the proxy's table health.
 */

export interface RiseFall {
  /** null until `rise` passes or `fall` failures in a row were seen. */
  up: boolean | null;
  passes: number;
  fails: number;
  since: Date | null;
}

export const INITIAL_RISE_FALL: RiseFall = { up: null, passes: 0, fails: 0, since: null };

/** The state after one more round. */
export function nextRiseFall(s: RiseFall, roundOk: boolean, rise: number, fall: number, now: Date): RiseFall {
  if (roundOk) {
    const passes = s.passes + 1;
    if (s.up !== true && passes >= rise) return { up: true, passes, fails: 0, since: now };
    return { ...s, passes, fails: 0 };
  }
  const fails = s.fails + 1;
  if (s.up !== false && fails >= fall) return { up: false, passes: 0, fails, since: now };
  return { ...s, passes: 0, fails };
}

/** The checks of one round for one proxy, as the pool says. */
export function roundRequests(job: HealthCheckJob, address: string): Omit<HealthcheckRequest, "id">[] {
  const out: Omit<HealthcheckRequest, "id">[] = [];
  const timeoutMs = job.check.timeoutMs;
  if (job.check.gue) out.push({ kind: "gue", target: address, port: job.guePort, timeoutMs });
  const s = job.check.service;
  if (s?.kind === "http")
    out.push({
      kind: "http",
      target: address,
      port: s.port,
      path: s.path,
      expectStatus: s.expectStatus,
      timeoutMs,
    });
  else if (s?.kind === "tcp") out.push({ kind: "tcp", target: address, port: s.port, timeoutMs });
  return out;
}

export interface CheckRunner {
  check(request: Omit<HealthcheckRequest, "id">): Promise<HealthcheckResult>;
}

export interface HealthCheckerOptions {
  runner: CheckRunner;
  /** Send this director's views to the console (POST /agent/health); may throw. */
  report: (report: AgentHealthReport) => Promise<void>;
  log: (line: string) => void;
  reportEveryMs?: number;
}

interface ProxyCheckState {
  job: HealthCheckJob;
  proxyId: string;
  address: string;
  riseFall: RiseFall;
  checks: HealthCheckOutcome[];
}

interface PoolLoop {
  job: HealthCheckJob;
  key: string;
  timer: NodeJS.Timeout;
  running: boolean;
}

export class HealthChecker {
  private readonly loops = new Map<string, PoolLoop>();
  /** Per pool/proxy: kept across job updates while the proxy stays (its rise/fall counts). */
  private readonly states = new Map<string, ProxyCheckState>();
  private heartbeat: NodeJS.Timeout | null = null;
  private reportSoon: NodeJS.Timeout | null = null;
  private reporting = false;
  private reportAgain = false;
  private stopped = false;
  private readonly throttled: ThrottledLog;

  constructor(private readonly o: HealthCheckerOptions) {
    this.throttled = new ThrottledLog(o.log);
  }

  /** The checks the console wants now (DesiredState.healthChecks); [] stops them all. */
  setJobs(jobs: readonly HealthCheckJob[]): void {
    if (this.stopped) return;
    const wanted = new Map(jobs.map((j) => [j.poolId, j]));
    for (const [poolId, loop] of this.loops) {
      const job = wanted.get(poolId);
      if (job === undefined || JSON.stringify(job) !== loop.key) {
        clearInterval(loop.timer);
        this.loops.delete(poolId);
      }
    }
    const keep = new Set<string>();
    for (const job of jobs) {
      for (const p of job.proxies) {
        const id = `${job.poolId}/${p.proxyId}`;
        keep.add(id);
        const s = this.states.get(id);
        if (s === undefined || s.address !== p.address)
          this.states.set(id, {
            job,
            proxyId: p.proxyId,
            address: p.address,
            riseFall: INITIAL_RISE_FALL,
            checks: [],
          });
        else s.job = job;
      }
      if (!this.loops.has(job.poolId)) {
        const loop: PoolLoop = {
          job,
          key: JSON.stringify(job),
          running: false,
          timer: setInterval(() => void this.round(loop), job.check.intervalMs),
        };
        loop.timer.unref();
        this.loops.set(job.poolId, loop);
        void this.round(loop);
      }
    }
    for (const id of this.states.keys()) if (!keep.has(id)) this.states.delete(id);
    if (jobs.length > 0 && this.heartbeat === null) {
      this.heartbeat = setInterval(
        () => void this.sendReport(),
        this.o.reportEveryMs ?? HEALTH_REPORT_EVERY_MS,
      );
      this.heartbeat.unref();
    } else if (jobs.length === 0 && this.heartbeat !== null) {
      clearInterval(this.heartbeat);
      this.heartbeat = null;
    }
  }

  /** This director's current views (reports, /metrics, tests). */
  views(): ProxyHealthView[] {
    return [...this.states.values()].map((s) => ({
      poolId: s.job.poolId,
      proxyId: s.proxyId,
      up: s.riseFall.up,
      since: s.riseFall.since?.toISOString() ?? null,
      checks: s.checks,
    }));
  }

  /** One round of a pool: every proxy's checks at once; a round still running is not doubled. */
  private async round(loop: PoolLoop): Promise<void> {
    if (loop.running || this.stopped) return;
    loop.running = true;
    try {
      const job = loop.job;
      let flipped = false;
      await Promise.all(
        job.proxies.map(async (p) => {
          const results = await Promise.all(roundRequests(job, p.address).map((r) => this.run(r)));
          const s = this.states.get(`${job.poolId}/${p.proxyId}`);
          if (s === undefined || this.loops.get(job.poolId) !== loop) return; // the job changed meanwhile
          const now = new Date();
          const before = s.riseFall.up;
          s.checks = results;
          s.riseFall = nextRiseFall(
            s.riseFall,
            results.every((r) => r.ok),
            job.check.rise,
            job.check.fall,
            now,
          );
          if (s.riseFall.up !== before && s.riseFall.up !== null) {
            flipped = true;
            const failing = results.filter((r) => !r.ok).map((r) => `${r.kind}: ${r.detail}`);
            this.o.log(
              `health: ${p.hostname} (${p.address}) of pool ${job.pool} is ${s.riseFall.up ? "up" : "down"}` +
                (failing.length > 0 ? ` (${failing.join("; ")})` : ""),
            );
          }
        }),
      );
      if (flipped) this.scheduleReport();
    } finally {
      loop.running = false;
    }
  }

  private async run(request: Omit<HealthcheckRequest, "id">): Promise<HealthCheckOutcome> {
    let r: HealthcheckResult;
    try {
      r = await this.o.runner.check(request);
    } catch (err) {
      r = { id: 0, ok: false, latencyUs: null, detail: err instanceof Error ? err.message : String(err) };
    }
    return {
      kind: request.kind,
      ok: r.ok,
      latencyUs: r.latencyUs,
      detail: r.detail.slice(0, 300),
      at: new Date().toISOString(),
    };
  }

  /** A flip goes to the console at once (coalesced with flips of the same moment). */
  private scheduleReport(): void {
    if (this.reportSoon !== null) return;
    this.reportSoon = setTimeout(() => {
      this.reportSoon = null;
      void this.sendReport();
    }, 50);
    this.reportSoon.unref();
  }

  private async sendReport(): Promise<void> {
    if (this.stopped) return;
    if (this.reporting) {
      this.reportAgain = true;
      return;
    }
    this.reporting = true;
    try {
      do {
        this.reportAgain = false;
        const views = this.views();
        if (views.length === 0) return;
        try {
          await this.o.report({ views });
        } catch (err) {
          this.throttled.say(
            "report",
            `health report to the console failed (${err instanceof Error ? err.message : String(err)}); it is sent again every ${
              (this.o.reportEveryMs ?? HEALTH_REPORT_EVERY_MS) / 1000
            } s`,
          );
        }
      } while (this.reportAgain && !this.stopped);
    } finally {
      this.reporting = false;
    }
  }

  stop(): void {
    this.stopped = true;
    for (const loop of this.loops.values()) clearInterval(loop.timer);
    this.loops.clear();
    if (this.heartbeat !== null) clearInterval(this.heartbeat);
    if (this.reportSoon !== null) clearTimeout(this.reportSoon);
  }
}
