/**
 * The simulated agents of ingest.bench.ts, in their own process (forked by it), so the agents'
 * work (making samples, JSON, HTTP) neither shares an event loop with what measures the console
 * (evaluation lag from the database) nor with the console itself (`next start`, another process).
 *
 * Protocol (IPC): the bench sends one AgentsJob; this process answers "warm" when every agent has
 * said hello and replayed its history, waits for "go", answers "measuring" when the measured phase
 * starts, and "done" with
 * the figures once every agent stopped and its last batch was answered. It is bounded in time: it
 * exits by itself HARD_LIMIT_S after the measured phase should have ended, whatever is in flight,
 * and the bench kills it if it does not.
 *
 * Each agent does what apps/agent does (agent.ts + console/console-link.ts): hello, then one sample
 * every desired.sampleIntervalMs (1000 ms) pushed into a buffer and sent at once if no send is in
 * flight, unless the console's last reply asked for a batch interval (batchIntervalMs): then
 * samples wait until 90 % of that interval passed since the last send started (at the start of the
 * measured phase, agents' last sends are spread over their interval, as in a steady state). Batches hold up to
 * OBSERVATION_BATCH_MAX samples; /agent/desired is fetched when the reply's revision changes.
 * Before the measured phase every agent replays history in one batch (as after a console outage).
 */
import { OBSERVATION_BATCH_MAX, type AgentObservationsIn, type Observation } from "@tide/contracts";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { TIDE_VERSION } from "../support/tide-version";
import { dataPlane, observation } from "./synthetic-observations";

/** What the bench asks of this process. */
export interface AgentsJob {
  baseURL: string;
  agents: { hostname: string; token: string }[];
  historyS: number;
  durationS: number;
}

/** What this process tells the bench. */
export type AgentsMessage =
  | { type: "warm"; seconds: number }
  | { type: "measuring"; endsAt: number }
  | { type: "done"; stats: AgentsStats };

export interface AgentsStats {
  /** Client-side latency of each POST /agent/observations of the measured phase, ms. */
  latencies: number[];
  batches: number;
  samples: number;
  accepted: number;
  maxBatch: number;
  /** Largest batchIntervalMs a reply asked for, ms (0: never asked). */
  maxBatchIntervalMs: number;
  errors: [string, number][];
  /** 503 busy answers (the console's in-flight bound): the batch waited Retry-After and was resent. */
  busy: number;
  desiredFetches: number;
  /** Seconds from the start of the measured phase until the agents stopped offering / were drained. */
  offeredS: number;
  wallS: number;
  /** This process's event-loop delay during the measured phase, ms (high: latencies include it). */
  loopDelayP99Ms: number;
  /** Agents with samples not yet stored (unsent or unanswered) DRAIN_LIMIT_S after the measured phase. */
  undrained: number;
  /** Samples those agents still held. */
  undrainedSamples: number;
}

const REQUEST_TIMEOUT_MS = 10_000; // as console-link.ts
/** Resends of one call answered 503 busy before it counts as an error. */
const BUSY_RETRIES = 30;
/** 503 busy answers in all, warm-up included (progress lines). */
let busyAnswers = 0;
/** Part of the batch interval after which a batch is due (console-link.ts BATCH_DUE_FRACTION). */
const BATCH_DUE_FRACTION = 0.9;
/** After the measured phase, wait at most this for the agents' last batches, s (then report). */
const DRAIN_LIMIT_S = 30;
/** Exit this long after the measured phase should have ended, whatever is still in flight, s. */
const HARD_LIMIT_S = 60;
/** Progress line on stderr every this many seconds of the measured phase. */
const PROGRESS_S = 10;

// ---------------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------------
// Simulated agent (console-link.ts semantics): a failed send (503 busy, a timeout, an error) keeps
// its samples and waits the agent's backoff (1 s doubling to 60 s with up to 20 % jitter,
// backoff.ts), at least the answer's Retry-After; the next send takes everything buffered meanwhile
// and does not wait for the batch interval until the buffer is empty again. Warm-up calls (hello,
// history) just wait Retry-After and resend, up to BUSY_RETRIES times.

/** A 503 busy answer to a measured send. */
class BusyAnswer extends Error {
  constructor(readonly retryAfterMs: number) {
    super("busy");
  }
}

/** apps/agent backoff.ts: doubling from 1 s to 60 s, with up to 20 % jitter. */
function backoffMs(failures: number): number {
  if (failures <= 0) return 0;
  return Math.round(Math.min(60_000, 1_000 * 2 ** (failures - 1)) * (1 + 0.2 * Math.random()));
}

interface Stats {
  latencies: number[];
  batches: number;
  samples: number;
  accepted: number;
  maxBatch: number;
  maxBatchIntervalMs: number;
  errors: Map<string, number>;
  busy: number;
  desiredFetches: number;
}

class SimAgent {
  private buffer: Observation[] = [];
  private sending = false;
  private revision: number | null = null;
  private nextAttemptAt = 0;
  /** Failed sends in a row (the backoff step). */
  private failures = 0;
  /** A send failed since the buffer was last empty: send without waiting for the batch interval. */
  private recovering = false;
  private batchIntervalMs = 0;
  private lastSendAt = 0;
  intervalMs = 1000;
  readonly startedAt = new Date(Date.now() - 3_600_000).toISOString();
  private inflight: Promise<void> = Promise.resolve();
  stats: Stats | null = null;

  constructor(
    private readonly baseURL: string,
    readonly hostname: string,
    readonly index: number,
    private readonly token: string,
  ) {}

  /**
   * One call. Answered 503 busy: with `retryBusy` (warm-up) it waits Retry-After and tries again,
   * else it throws BusyAnswer. `ms`: the answered attempt.
   */
  private async call(
    method: "GET" | "POST",
    p: string,
    body?: unknown,
    retryBusy = true,
  ): Promise<{ body: unknown; ms: number }> {
    const json = body !== undefined ? JSON.stringify(body) : undefined;
    for (let attempt = 0; ; attempt++) {
      const t0 = performance.now();
      const res = await fetch(new URL(p, this.baseURL), {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(json !== undefined ? { "content-type": "application/json" } : {}),
        },
        body: json,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      if (res.status === 503 && (attempt < BUSY_RETRIES || !retryBusy)) {
        await res.text();
        busyAnswers++;
        if (this.stats) this.stats.busy++;
        const afterS = Number(res.headers.get("retry-after")) || 1;
        if (!retryBusy) throw new BusyAnswer(afterS * 1000);
        await new Promise((r) => setTimeout(r, afterS * 1000 * (1 + 0.2 * Math.random())));
        continue;
      }
      if (!res.ok) throw new Error(`${method} ${p}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
      const answer = (await res.json()) as unknown;
      return { body: answer, ms: performance.now() - t0 };
    }
  }

  async hello(): Promise<void> {
    const r = (
      await this.call("POST", "/api/v1/agent/hello", {
        protocolVersion: 1,
        agentVersion: TIDE_VERSION,
        hostname: this.hostname,
        kernelRelease: "6.12.38+deb13-amd64",
        roles: ["proxy"],
        probes: [],
        dataPlane,
      })
    ).body as { desired: { revision: number; sampleIntervalMs: number } };
    this.revision = r.desired.revision;
    this.intervalMs = r.desired.sampleIntervalMs;
  }

  /** One batch of past samples (not measured), like a replay after an outage. */
  async backfill(seconds: number, until: number): Promise<void> {
    const observations = [];
    for (let s = seconds; s >= 1; s--) observations.push(this.sample(new Date(until - s * 1000)));
    const body: AgentObservationsIn = { observations, dataPlane, replayed: true };
    const reply = (await this.call("POST", "/api/v1/agent/observations", body)).body as {
      batchIntervalMs?: number;
    };
    this.batchIntervalMs = reply.batchIntervalMs ?? 0;
    this.lastSendAt = Date.now();
  }

  sample(at: Date): Observation {
    return observation(this.hostname, this.index, at, this.startedAt);
  }

  /** Agent loop tick: queue a sample, send if nothing is in flight and no batch interval holds it. */
  offer(at: Date): void {
    this.buffer.push(this.sample(at));
    const now = Date.now();
    if (this.sending || now < this.nextAttemptAt) return;
    if (
      !this.recovering &&
      this.batchIntervalMs > 0 &&
      now - this.lastSendAt < this.batchIntervalMs * BATCH_DUE_FRACTION
    )
      return;
    this.lastSendAt = now;
    this.startFlush();
  }

  private startFlush(): void {
    this.sending = true;
    this.inflight = this.flush()
      .catch((err: unknown) => {
        this.failures++;
        this.recovering = true;
        let wait = backoffMs(this.failures);
        if (err instanceof BusyAnswer) {
          wait = Math.max(wait, err.retryAfterMs);
        } else {
          const msg = (err instanceof Error ? err.message : String(err)).replace(/tide_host_\S+/g, "[token]");
          const key = msg.slice(0, 120);
          this.stats?.errors.set(key, (this.stats.errors.get(key) ?? 0) + 1);
        }
        this.nextAttemptAt = Date.now() + wait;
      })
      .finally(() => {
        this.sending = false;
      });
  }

  /**
   * Steady state: agents that have been sending for a while are spread over their batch interval.
   * Without this all of them would send their first measured batch in the same second (their
   * history went at warm-up, long enough ago), a herd the console never sees from real agents.
   */
  spreadOverInterval(now: number): void {
    this.lastSendAt = now - Math.random() * this.batchIntervalMs;
  }

  get busy(): boolean {
    return this.sending;
  }

  /** Samples not stored yet: buffered, or in a batch not answered yet (it stays buffered until then). */
  get held(): number {
    return this.buffer.length;
  }

  private async flush(): Promise<void> {
    while (this.buffer.length > 0) {
      const batch = this.buffer.slice(0, OBSERVATION_BATCH_MAX);
      const body: AgentObservationsIn = { observations: batch, dataPlane, replayed: false };
      const answer = await this.call("POST", "/api/v1/agent/observations", body, false);
      this.failures = 0;
      const reply = answer.body as {
        accepted: number;
        desiredRevision: number;
        batchIntervalMs?: number;
      };
      const dt = answer.ms;
      this.buffer.splice(0, batch.length);
      this.batchIntervalMs = reply.batchIntervalMs ?? 0;
      if (this.stats) {
        this.stats.latencies.push(dt);
        this.stats.batches++;
        this.stats.samples += batch.length;
        this.stats.accepted += reply.accepted;
        this.stats.maxBatch = Math.max(this.stats.maxBatch, batch.length);
        this.stats.maxBatchIntervalMs = Math.max(this.stats.maxBatchIntervalMs, this.batchIntervalMs);
      }
      if (this.buffer.length === 0) this.recovering = false;
      if (reply.desiredRevision !== this.revision) {
        const d = (await this.call("GET", "/api/v1/agent/desired")).body as { revision: number };
        this.revision = d.revision;
        if (this.stats) this.stats.desiredFetches++;
      }
    }
  }

  /**
   * Send what is still held when the agent would send it, and wait until every batch is answered.
   * Errors are counted like any other batch's.
   *
   * Each agent keeps its own schedule: its next batch is due at its batch interval after its last
   * send (or its backoff after a failure), as in the measured phase. Sending everything at the end
   * of the measured phase at once made a herd of 1,000 simultaneous batches no real fleet sends
   * (its agents do not all stop at one instant), and that herd was where the worst latencies of
   * the run came from.
   */
  async drain(deadline: number): Promise<void> {
    await this.inflight;
    while (this.buffer.length > 0 && Date.now() < deadline) {
      const due = this.recovering
        ? this.nextAttemptAt
        : Math.max(this.nextAttemptAt, this.lastSendAt + this.batchIntervalMs * BATCH_DUE_FRACTION);
      const wait = Math.min(due, deadline) - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (Date.now() >= deadline) break;
      this.lastSendAt = Date.now();
      this.startFlush();
      await this.inflight;
    }
  }
}

async function pool<T>(items: T[], width: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** Send a message to the bench; resolves once it has left this process. */
function send(m: AgentsMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) resolve();
    else process.send(m, undefined, {}, () => resolve());
  });
}

async function run(job: AgentsJob): Promise<void> {
  const agents = job.agents.map((a, i) => new SimAgent(job.baseURL, a.hostname, i, a.token));
  // Warm-up (not measured): hello and history per agent.
  const warm0 = performance.now();
  const until = Date.now();
  await pool(agents, 16, async (a) => {
    await a.hello();
    await a.backfill(job.historyS, until);
  });
  await send({ type: "warm", seconds: (performance.now() - warm0) / 1000 });
  await go; // the bench has read its "before" figures

  const stats: Stats = {
    latencies: [],
    batches: 0,
    samples: 0,
    accepted: 0,
    maxBatch: 0,
    maxBatchIntervalMs: 0,
    errors: new Map(),
    busy: 0,
    desiredFetches: 0,
  };
  for (const a of agents) a.stats = stats;
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  // Measured phase: each agent samples every intervalMs, phases spread over the first interval.
  const t0 = performance.now();
  const end = Date.now() + job.durationS * 1000;
  for (const a of agents) a.spreadOverInterval(Date.now());
  setTimeout(
    () => {
      console.error(`bench agents: still running ${HARD_LIMIT_S} s after the measured phase; exiting`);
      process.exit(2);
    },
    (job.durationS + HARD_LIMIT_S) * 1000,
  ).unref();
  await send({ type: "measuring", endsAt: end });
  let reported = 0;
  const progress = setInterval(() => {
    const errors = [...stats.errors.values()].reduce((a, b) => a + b, 0);
    // Latencies of the answers since the last line: where in the run the slow ones fall.
    const recent = stats.latencies.slice(reported).sort((a, b) => a - b);
    reported = stats.latencies.length;
    const at = (q: number) =>
      recent.length > 0
        ? recent[Math.min(recent.length - 1, Math.floor(q * recent.length))]!.toFixed(0)
        : "-";
    console.error(
      `bench agents: ${((performance.now() - t0) / 1000).toFixed(0)} s: ${stats.batches} batches, ${stats.samples} samples, ${errors} errors, ${busyAnswers} busy answers so far, ${agents.filter((a) => a.busy).length} agents waiting for an answer; latency of the last ${PROGRESS_S} s p50 ${at(0.5)} / p95 ${at(0.95)} / max ${at(1)} ms`,
    );
  }, PROGRESS_S * 1000);
  // Each agent drains as soon as its own last sample is queued. Draining only once every agent
  // had stopped held back for up to a second every batch that fell due meanwhile, and they all
  // left together when the drain began: a herd of ~100 batches at the end of every run.
  let offeredS = 0;
  const drainDeadline = end + DRAIN_LIMIT_S * 1000;
  await Promise.race([
    Promise.all(
      agents.map(async (a) => {
        await new Promise((r) => setTimeout(r, Math.random() * a.intervalMs));
        while (Date.now() < end) {
          const started = Date.now();
          a.offer(new Date(started));
          await new Promise((r) => setTimeout(r, Math.max(0, a.intervalMs - (Date.now() - started))));
        }
        offeredS = Math.max(offeredS, (performance.now() - t0) / 1000);
        await a.drain(drainDeadline);
      }),
    ),
    new Promise((r) => setTimeout(r, Math.max(0, drainDeadline + 1000 - Date.now()))),
  ]);
  const undrained = agents.filter((a) => a.held > 0);
  clearInterval(progress);
  const wallS = (performance.now() - t0) / 1000;
  loopDelay.disable();
  await send({
    type: "done",
    stats: {
      latencies: stats.latencies,
      batches: stats.batches,
      samples: stats.samples,
      accepted: stats.accepted,
      maxBatch: stats.maxBatch,
      maxBatchIntervalMs: stats.maxBatchIntervalMs,
      errors: [...stats.errors],
      busy: stats.busy,
      desiredFetches: stats.desiredFetches,
      offeredS,
      wallS,
      loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
      undrained: undrained.length,
      undrainedSamples: undrained.reduce((n, a) => n + a.held, 0),
    },
  });
}

// One listener for the process's whole life: Node unrefs the IPC channel while nothing listens, and
// the process would then exit with its last message (the figures) still unsent.
let started = false;
let goSignal: () => void = () => undefined;
const go = new Promise<void>((r) => (goSignal = r));
process.on("message", (m: AgentsJob | "go") => {
  if (m === "go") {
    goSignal();
    return;
  }
  if (started) return;
  started = true;
  run(m).then(
    () => process.disconnect?.(),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
});
