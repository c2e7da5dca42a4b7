import { createHash } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import {
  AgentHelloReply,
  AgentObservationsReply,
  DesiredState,
  OBSERVATION_BATCH_MAX,
  type AgentHello,
  type AgentObservationsIn,
  type DataPlaneState,
  type Observation,
} from "@tide/contracts";
import { BACKOFF_MIN_MS, backoffMs, retryWaitMs, RETRY_AFTER_MAX_MS } from "./backoff";
import { BATCH_MAX_BYTES, boundedBatch, jsonBytes } from "./batch-size";
import { ConsoleTlsError } from "./console-fetch";
import { ConsoleUrls } from "./console-urls";
import { deliveryFailure, DROP_REASONS, ThrottledLog, type DropReason } from "./delivery";
import { RingBuffer } from "./ring-buffer";
import { DiskSpool } from "./spool";

/** One HTTP call's time limit, in ms. */
const REQUEST_TIMEOUT_MS = 10_000;
/**
 * How long one desired-state long poll may wait on the console, ms: the console answers at once on
 * a change (it is woken at commit) and with the unchanged state after this.
 */
export const DESIRED_WAIT_MS = 20_000;

export interface ConsoleLinkOptions {
  /** The console's base URL (one console); consoleUrls wins when both are given. */
  consoleUrl?: string;
  /** Base URLs of several consoles: the link fails over between them (console-urls.ts). */
  consoleUrls?: readonly string[];
  token: string;
  bufferCapacity: number;
  /** Bound of the buffer in bytes (memory and spool); default: unbounded (the count bounds it). */
  bufferMaxBytes?: number;
  /** Directory of the buffer on disk (spool.ts), replayed after a restart; null/absent = memory only. */
  spoolDir?: string | null;
  hello: () => AgentHello;
  log: (line: string) => void;
  /** Called with each new desired state (after hello and whenever its revision changes). */
  onDesired: (desired: DesiredState) => Promise<void>;
  /** Called after each accepted batch (tests, metrics): how many samples, their times, replayed. */
  onDelivered?: (batch: { sampledAt: string[]; replayed: boolean; accepted: number }) => void;
  /** HTTP client (the agent: consoleFetch, which takes a CA; tests: a fake); default: the global fetch. */
  fetch?: typeof fetch;
}

/**
 * Part of the console's batch interval after which the next batch is due. Samples are queued on the
 * agent's ticks (one per sample interval), so with an interval of whole ticks the tick that ends it
 * may land a few ms early; without the slack that sample would wait one tick more every time.
 */
const BATCH_DUE_FRACTION = 0.9;

/** Per-call options of ConsoleLink.call / fetchRaw. */
export interface CallOptions {
  /** Time limit of the call, ms (default REQUEST_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Aborts the call (the agent stopping). */
  signal?: AbortSignal;
  /** Ask for the connection to be closed after the answer (no keep-alive). */
  closeConnection?: boolean;
}

/** A non-2xx answer from the console. */
export class ConsoleHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The answer's Retry-After in ms (seconds form only), or null. */
    readonly retryAfterMs: number | null = null,
    /** The start of the answer's body (redacted), for reading a refusal's reason. */
    readonly body = "",
  ) {
    super(message);
  }
}

/**
 * The console's reason when it refused this agent's version (a 409 whose details say
 * "version_skew", contracts' versionSkew), or null for any other answer.
 */
export function versionSkewRefusal(err: unknown): string | null {
  if (!(err instanceof ConsoleHttpError) || err.status !== 409) return null;
  try {
    const reply = JSON.parse(err.body) as { message?: unknown; data?: { details?: { reason?: unknown } } };
    return reply.data?.details?.reason === "version_skew" && typeof reply.message === "string"
      ? reply.message
      : null;
  } catch {
    return null;
  }
}

/** Retry-After in ms when it is a number of seconds (the console's form), else null. */
export function retryAfterMs(header: string | null): number | null {
  if (header === null || !/^\d{1,6}$/.test(header.trim())) return null;
  return Number(header.trim()) * 1000;
}

/** Remove anything that looks like a host token from a message (never log the token). */
export function redact(text: string, token: string): string {
  let out = token !== "" ? text.split(token).join("[token]") : text;
  out = out.replace(/tide_host_[A-Za-z0-9_-]+/g, "tide_host_[redacted]");
  return out;
}

/**
 * The agent's link to the console: hello, then batches of observations; samples wait in a bounded
 * ring buffer while the console is unreachable and are replayed oldest first (replayed: true).
 */
export class ConsoleLink {
  readonly buffer: RingBuffer<Observation>;
  private helloDone = false;
  private failures = 0;
  private nextAttemptAt = 0;
  private desiredRevision: number | null = null;
  private sending = false;
  private everFailed = false;
  private watching = false;
  private closed = false;
  private watchAbort: AbortController | null = null;
  lastError: string | null = null;
  /**
   * Why the last attempt failed, null once the console answers: no answer (or 5xx, 404 …), the
   * host token refused, or a TLS certificate this agent does not accept. The sample refusals of
   * delivery.ts are not failures of the link.
   */
  failing: "unreachable" | "token" | "tls" | "version" | null = null;
  /**
   * Largest batch to send next: halved while the console refuses batches (4xx) until the refused
   * sample is alone (delivery.ts); back to OBSERVATION_BATCH_MAX once that sample is dropped or the
   * buffer is empty (not after each delivery: that would search the same samples again).
   */
  private batchLimit = OBSERVATION_BATCH_MAX;
  private readonly drops = new Map<DropReason, number>();
  private spool: DiskSpool | null = null;
  private readonly refusals: ThrottledLog;
  private readonly consoles: ConsoleUrls;
  /**
   * The console's batch interval (AgentObservationsReply.batchIntervalMs), ms; 0 = send each sample
   * at once. A console with many agents asks them to hold samples and send fewer, larger batches.
   */
  private batchIntervalMs = 0;
  /** When the last delivery started (the batch interval counts from it), ms. */
  private lastSendAt = 0;
  /**
   * Until when (epoch ms) each console, by base URL, said it is busy (a 503 on any route: the
   * database's timeouts, its in-flight bound): calls to it before then are not sent (fetchRaw).
   */
  private readonly busyUntil = new Map<string, number>();

  constructor(private readonly o: ConsoleLinkOptions) {
    this.buffer = new RingBuffer<Observation>(o.bufferCapacity, o.bufferMaxBytes);
    this.refusals = new ThrottledLog(o.log);
    const urls = o.consoleUrls ?? (o.consoleUrl !== undefined ? [o.consoleUrl] : []);
    if (urls.length === 0) throw new Error("ConsoleLink: consoleUrl or consoleUrls is required");
    this.consoles = new ConsoleUrls(urls);
  }

  /** The batch interval the console asked for last, ms (0: each sample at once). */
  get batchInterval(): number {
    return this.batchIntervalMs;
  }

  /** The console the link sends to (the one that last answered, or the next one it tries). */
  get consoleUrl(): string {
    return this.consoles.current;
  }

  /**
   * Samples that left the buffer without being stored, by reason: since the spool was made (its
   * totals survive restarts), or since the agent started when there is no spool. Sent to the
   * console with every batch (AgentObservationsIn.dropped) and exported in /metrics.
   */
  get samplesDropped(): Record<DropReason, number> {
    return Object.fromEntries(DROP_REASONS.map((r) => [r, this.drops.get(r) ?? 0])) as Record<
      DropReason,
      number
    >;
  }

  private countDrop(reason: DropReason, n = 1): void {
    if (n <= 0) return;
    this.drops.set(reason, (this.drops.get(reason) ?? 0) + n);
    this.spool?.droppedChanged();
  }

  /** Samples in the spool on disk, bytes (0 without one). */
  get spoolBytes(): number {
    return this.spool?.bytes ?? 0;
  }

  /**
   * Open the spool (when configured) and queue what an earlier run did not deliver, to be replayed
   * first. Throws when the spool is another running agent's.
   */
  async open(): Promise<void> {
    if (!this.o.spoolDir) return;
    const { spool, pending, dropped, damaged } = await DiskSpool.open<Observation>(
      this.o.spoolDir,
      this.o.log,
    );
    this.spool = spool;
    for (const r of DROP_REASONS) if (dropped[r]) this.drops.set(r, dropped[r]);
    spool.dropped = () => this.samplesDropped;
    this.countDrop("spool_damaged", damaged);
    let lost = 0;
    for (const o of pending) lost += this.buffer.push(o, jsonBytes(o));
    // Samples beyond the buffer's bound (a smaller bufferMinutes/bufferMaxMiB since) are dropped.
    spool.ack(lost);
    this.countDrop("buffer_full", lost);
    if (pending.length > 0) {
      this.everFailed = true;
      this.o.log(
        `spool ${this.o.spoolDir}: ${this.buffer.size} undelivered samples from an earlier run to replay` +
          (lost > 0 ? `; ${lost} over the buffer's bound dropped` : "") +
          (damaged > 0 ? `; ${damaged} damaged lines skipped` : ""),
      );
    }
  }

  get connected(): boolean {
    return this.helloDone && this.failures === 0;
  }

  /** Queue a sample and try to deliver what is queued (never throws). */
  async offer(observation: Observation, dataPlane: DataPlaneState[]): Promise<void> {
    const json = JSON.stringify(observation);
    this.spool?.append(json);
    const full = this.buffer.push(observation, Buffer.byteLength(json));
    if (full > 0) {
      this.spool?.ack(full);
      this.countDrop("buffer_full", full);
    }
    if (this.sending || Date.now() < this.nextAttemptAt || this.holding()) return;
    this.sending = true;
    this.lastSendAt = Date.now();
    const several = this.consoles.urls.length > 1;
    try {
      await this.flush(dataPlane);
      if (this.failures > 0)
        this.o.log(several ? `console reachable again at ${this.consoleUrl}` : "console reachable again");
      this.failures = 0;
      this.consoles.answered();
      this.lastError = null;
      this.failing = null;
    } catch (err) {
      this.failures++;
      this.everFailed = true;
      this.helloDone = false;
      this.lastError = redact(err instanceof Error ? err.message : String(err), this.o.token);
      const status = err instanceof ConsoleHttpError ? err.status : null;
      // A token problem is no outage: every console would say the same (one database).
      const token = deliveryFailure(status) === "token";
      // 503: the console is up but busy (its in-flight bound, a locked row): not an outage either,
      // but another console may have room, and this one says when to come back.
      const busy = status === 503;
      const moved = token ? (this.consoles.refused(), null) : this.consoles.unreachable();
      const asked = err instanceof ConsoleHttpError && moved === null ? err.retryAfterMs : null;
      const wait = retryWaitMs(backoffMs(this.consoles.backoffStep), asked);
      this.nextAttemptAt = Date.now() + wait;
      const down = busy ? "busy" : "unreachable";
      // A certificate this agent does not trust is not an outage the next attempt may end: its
      // message says what to change, once a minute per console (the retries go on with backoff).
      const tls = err instanceof ConsoleTlsError;
      // A console of another release that refuses this agent's version: not an outage either (it
      // says so plainly, once a minute; another console, mid-upgrade, may be of this version).
      const skew = versionSkewRefusal(err);
      if (skew !== null) this.lastError = skew;
      this.failing = token ? "token" : tls ? "tls" : skew !== null ? "version" : "unreachable";
      const what = token
        ? `console${several ? ` ${this.consoleUrl}` : ""} rejected the host token (${this.lastError}): check hostTokenFile and the token's host`
        : tls
          ? this.lastError + (moved !== null ? `; trying ${moved.to}` : "")
          : skew !== null
            ? `console ${moved?.from ?? this.consoleUrl} refuses this agent's version: ${skew}` +
              (moved !== null ? `; trying ${moved.to}` : "")
            : moved !== null
              ? `console ${moved.from} ${down} (${this.lastError}); trying ${moved.to}`
              : `console ${down} (${this.lastError})`;
      const line = `${what}; ${this.buffer.size} samples buffered, retry in ${wait} ms`;
      if (tls) this.refusals.say(`tls:${err.origin}`, line);
      else if (skew !== null) this.refusals.say("version", line);
      else this.o.log(line);
    } finally {
      this.sending = false;
    }
  }

  /**
   * Whether new samples wait for the console's batch interval. Never before the first delivery
   * after a (re)connect, and never with a replay queued (the buffer then holds more than an
   * interval's worth, and a console that just came back wants the gap filled).
   */
  private holding(): boolean {
    if (this.batchIntervalMs <= 0 || !this.helloDone || this.everFailed) return false;
    return Date.now() - this.lastSendAt < this.batchIntervalMs * BATCH_DUE_FRACTION;
  }

  private async flush(dataPlane: DataPlaneState[]): Promise<void> {
    if (!this.helloDone) {
      const reply = AgentHelloReply.parse(await this.call("POST", "/api/v1/agent/hello", this.o.hello()));
      this.helloDone = true;
      // After a (re)connect the console's answer is the truth, whatever revision we had.
      this.desiredRevision = null;
      await this.applyDesired(reply.desired);
      if (!this.watching) void this.watchDesired();
    }
    // Everything but the newest sample is a replay once a delivery has failed.
    while (this.buffer.size > 0) {
      const batch = boundedBatch(this.buffer.peek(this.batchLimit), BATCH_MAX_BYTES, jsonBytes);
      const replayed = this.everFailed && (this.buffer.size > 1 || batch.length > 1);
      const body: AgentObservationsIn = {
        observations: batch,
        dataPlane,
        replayed,
        dropped: this.samplesDropped,
      };
      let answer: unknown;
      try {
        answer = await this.call("POST", "/api/v1/agent/observations", body);
      } catch (err) {
        // Unreachable or a token problem: the caller keeps the samples and backs off.
        if (!(err instanceof ConsoleHttpError) || deliveryFailure(err.status) !== "refused") throw err;
        this.refused(batch, err);
        continue;
      }
      // Loose: a field a newer console adds to the reply must not make the batch look undelivered
      // (a strict parse failing here would resend the batch forever).
      const reply = AgentObservationsReply.loose().parse(answer);
      this.batchIntervalMs = reply.batchIntervalMs ?? 0;
      this.buffer.drop(batch.length);
      this.spool?.ack(batch.length);
      if (this.buffer.size === 0) this.batchLimit = OBSERVATION_BATCH_MAX;
      this.sampleRefusals(reply.refused ?? []);
      this.o.onDelivered?.({ sampledAt: batch.map((o) => o.sampledAt), replayed, accepted: reply.accepted });
      if (this.buffer.size === 0) this.everFailed = false;
      if (reply.desiredRevision !== this.desiredRevision) {
        const desired = DesiredState.parse(await this.call("GET", "/api/v1/agent/desired"));
        // A revision lower than ours means the console's record of this host started over: take it.
        await this.applyDesired(
          desired,
          this.desiredRevision !== null && reply.desiredRevision < this.desiredRevision,
        );
      }
    }
  }

  /**
   * The console refused a batch (4xx, delivery.ts): split it to find the refused sample, or drop
   * that sample once it is alone, so the samples behind it go on.
   */
  private refused(batch: readonly Observation[], err: ConsoleHttpError): void {
    const why = redact(err.message, this.o.token);
    if (batch.length > 1) {
      this.batchLimit = Math.ceil(batch.length / 2);
      this.refusals.say(
        "split",
        `console refused a batch of ${batch.length} samples (${why}); sending smaller batches to find the refused ones`,
      );
      return;
    }
    this.buffer.drop(1);
    this.spool?.ack(1);
    this.batchLimit = OBSERVATION_BATCH_MAX;
    this.countDrop("refused");
    this.refusals.say("dropped", `console refused the sample of ${batch[0]!.sampledAt} (${why}); dropped it`);
  }

  /** Samples of a delivered batch the console did not store: logged, counted unless duplicates. */
  private sampleRefusals(refused: NonNullable<AgentObservationsReply["refused"]>): void {
    for (const r of refused) {
      if (r.reason !== "duplicate") this.countDrop(r.reason);
      this.refusals.say(
        `sample:${r.reason}`,
        `console did not store the sample of ${r.sampledAt}: ${r.reason} (${r.detail})`,
      );
    }
  }

  /**
   * Long poll of the desired state: the console answers as soon as this host's desired revision moves
   * (a drain reaches the directors' agents at commit, not at their next batch). The batch replies'
   * revision stays the fallback. Runs from the first hello until close(); errors back off.
   */
  private async watchDesired(): Promise<void> {
    this.watching = true;
    let failures = 0;
    try {
      while (!this.closed) {
        if (!this.helloDone || this.desiredRevision === null) {
          await sleep(1_000);
          continue;
        }
        const asked = this.desiredRevision;
        const started = Date.now();
        try {
          this.watchAbort = new AbortController();
          const desired = DesiredState.parse(
            await this.call(
              "GET",
              `/api/v1/agent/desired?after=${asked}&waitMs=${DESIRED_WAIT_MS}`,
              undefined,
              {
                timeoutMs: DESIRED_WAIT_MS + REQUEST_TIMEOUT_MS,
                signal: this.watchAbort.signal,
                // Its own connection, closed after the answer: a kept-alive one that was busy when the
                // console began to stop would hold the console's shutdown up for its idle timeout.
                closeConnection: true,
              },
            ),
          );
          failures = 0;
          if (desired.revision !== asked) await this.applyDesired(desired);
          // A console that answers early without a change (no LISTEN connection) is not hammered.
          else if (Date.now() - started < 1_000) await sleep(1_000);
        } catch (err) {
          if (this.closed) return;
          failures++;
          // A busy console's Retry-After (a 503 of this poll, or of another route: fetchRaw) is
          // waited out too, not only the backoff.
          const wait = retryWaitMs(
            backoffMs(failures),
            err instanceof ConsoleHttpError && err.status === 503 ? err.retryAfterMs : null,
          );
          if (failures === 1)
            this.o.log(
              `desired-state watch failed (${redact(String(err), this.o.token)}); retry in ${wait} ms`,
            );
          await sleep(wait);
        }
      }
    } finally {
      this.watching = false;
    }
  }

  /** Stop the desired-state watch and close the spool (the agent is stopping). */
  async close(): Promise<void> {
    this.closed = true;
    this.watchAbort?.abort();
    await this.spool?.close();
  }

  private async applyDesired(desired: DesiredState, force = false): Promise<void> {
    // Revisions only grow; an answer overtaken by a newer one (long poll vs batch reply) is dropped.
    if (!force && this.desiredRevision !== null && desired.revision <= this.desiredRevision) return;
    this.desiredRevision = desired.revision;
    try {
      await this.o.onDesired(desired);
    } catch (err) {
      this.o.log(
        `applying desired revision ${desired.revision} failed: ${redact(String(err), this.o.token)}`,
      );
    }
  }

  /** An authenticated call; rejects on network errors, timeouts and non-2xx answers. */
  async call(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
    options: CallOptions = {},
  ): Promise<unknown> {
    const res = await this.fetchRaw(method, path, body, options);
    return (await res.json()) as unknown;
  }

  /**
   * An authenticated call; rejects on network errors, timeouts and non-2xx answers. A console that
   * answered 503 (busy) on any route is not sent anything until its Retry-After has passed (at
   * most RETRY_AFTER_MAX_MS; 1 s without one): the call fails at once with a 503 of its own, as if
   * the console had said busy again, and each caller backs off as it does for that (batches and
   * hello in offer, the desired-state watch, health reports, table downloads).
   */
  async fetchRaw(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
    options: CallOptions = {},
  ): Promise<Response> {
    const { timeoutMs = REQUEST_TIMEOUT_MS, signal, closeConnection = false } = options;
    const base = this.consoles.current;
    const url = new URL(path, base);
    const holdMs = (this.busyUntil.get(base) ?? 0) - Date.now();
    if (holdMs > 0) {
      throw new ConsoleHttpError(
        503,
        `${method} ${url.pathname}: not sent, the console said it is busy (retry in ${holdMs} ms)`,
        holdMs,
      );
    }
    const res = await (this.o.fetch ?? fetch)(url, {
      method,
      headers: {
        authorization: `Bearer ${this.o.token}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...(closeConnection ? { connection: "close" } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
      signal: signal
        ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
        : AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) {
      // The start of the body in the message; more of it kept to read a refusal's JSON reason.
      const full = (await res.text().catch(() => "")).slice(0, 4096);
      const text = full.slice(0, 300);
      const asked = retryAfterMs(res.headers.get("retry-after"));
      if (res.status === 503) {
        this.busyUntil.set(base, Date.now() + Math.min(asked ?? BACKOFF_MIN_MS, RETRY_AFTER_MAX_MS));
      }
      throw new ConsoleHttpError(
        res.status,
        `${method} ${url.pathname}: HTTP ${res.status} ${redact(text, this.o.token)}`,
        asked,
        redact(full, this.o.token),
      );
    }
    return res;
  }

  /**
   * Download a table (GLBD bytes), check its sha256 and write it atomically; returns the path. A file
   * already there with the right hash is used as it is (a restarted director is repaired from disk).
   */
  async downloadTable(downloadPath: string, contentHash: string, dir: string): Promise<string> {
    const cached = `${dir}/${contentHash}.glbd`;
    const existing = await readFile(cached).catch(() => null);
    if (existing !== null && createHash("sha256").update(existing).digest("hex") === contentHash)
      return cached;
    const res = await this.fetchRaw("GET", downloadPath);
    const bytes = Buffer.from(await res.arrayBuffer());
    const got = createHash("sha256").update(bytes).digest("hex");
    if (got !== contentHash)
      throw new Error(`table ${downloadPath}: sha256 ${got} != contentHash ${contentHash}`);
    await mkdir(dir, { recursive: true });
    const path = `${dir}/${contentHash}.glbd`;
    const tmp = `${path}.tmp-${process.pid}`;
    await writeFile(tmp, bytes, { mode: 0o640 });
    await rename(tmp, path);
    return path;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
