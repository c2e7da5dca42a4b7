import { TideError } from "@tide/contracts";
import type { Context } from "../context";
import { BUSY_RETRY_AFTER_S } from "../db";
import { httpEnv } from "../env";

/**
 * How many procedure calls one caller (an API token, a signed-in user, a host) runs at once, in
 * this console process, whatever the transport: a tRPC batch's calls, REST requests, tRPC calls
 * made in parallel. tRPC runs a batch's calls at once, so 40 parallel batches of 50 calls from one
 * read token were 2,000 calls competing for 10 database connections: 15 answered 500 and another
 * caller's GET waited 23 s (issue 27 item 6). Past its `limit`, a caller's calls wait in line (its
 * own line, nobody else's); past `maxQueued` waiting, or after `maxWaitMs` in line, a call is
 * answered 503 busy with Retry-After.
 */
export class CallerSlots {
  private readonly callers = new Map<string, { running: number; waiting: Waiter[] }>();
  /** Calls refused since the process started. */
  refused = 0;

  constructor(
    readonly limit: number,
    readonly maxQueued: number,
    readonly maxWaitMs: number,
  ) {}

  /** Calls running now for `key`, and waiting. */
  load(key: string): { running: number; waiting: number } {
    const c = this.callers.get(key);
    return { running: c?.running ?? 0, waiting: c?.waiting.length ?? 0 };
  }

  /** Run `fn` in one of the caller's slots; throws TideError busy when none comes free in time. */
  async run<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    let caller = this.callers.get(key);
    if (!caller) {
      caller = { running: 0, waiting: [] };
      this.callers.set(key, caller);
    }
    if (caller.running < this.limit) caller.running++;
    else await this.wait(key, caller, signal);
    try {
      return await fn();
    } finally {
      const next = caller.waiting.shift();
      if (next) next.grant();
      else if (--caller.running === 0) this.callers.delete(key);
    }
  }

  private wait(key: string, caller: { running: number; waiting: Waiter[] }, signal?: AbortSignal) {
    if (caller.waiting.length >= this.maxQueued) {
      this.refused++;
      return Promise.reject(
        this.busy(`${caller.running + caller.waiting.length} of its calls are running or waiting`),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const leave = (error: TideError) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        const i = caller.waiting.indexOf(waiter);
        if (i >= 0) caller.waiting.splice(i, 1);
        if (caller.running === 0 && caller.waiting.length === 0) this.callers.delete(key);
        reject(error);
      };
      const onAbort = () =>
        leave(
          new TideError("client_closed", "The client went away while its call waited; nothing was done."),
        );
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.refused++;
        leave(this.busy(`its calls ahead of this one did not finish within ${this.maxWaitMs / 1000} s`));
      }, this.maxWaitMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      caller.waiting.push(waiter);
    });
  }

  private busy(why: string): TideError {
    return new TideError(
      "busy",
      `Too many calls at once from this caller (${why}; ${this.limit} run at a time). Nothing was done; retry after the Retry-After header's seconds, or send fewer calls at once.`,
      { retryAfterS: BUSY_RETRY_AFTER_S, callerLimit: this.limit },
    );
  }
}

interface Waiter {
  grant: () => void;
}

/**
 * Whose slots a call takes: the API token, the signed-in user (all their sessions), or the host;
 * null for a caller with no credentials (public procedures only, refused before any work).
 */
export function callerKeyOf(ctx: Pick<Context, "actor" | "host">): string | null {
  if (ctx.actor) return ctx.actor.tokenId ? `token:${ctx.actor.tokenId}` : `user:${ctx.actor.userId}`;
  if (ctx.host) return `host:${ctx.host.hostId}`;
  return null;
}

/**
 * Seconds a call may wait in its caller's line before it is answered busy: the same bound as a
 * wait for a database connection (DB_TIMEOUTS.connectTimeoutMs), well inside a client's patience.
 */
export const CALLER_MAX_WAIT_MS = 5_000;

let shared: CallerSlots | undefined;

/** This process's caller slots (TIDE_CALLER_CONCURRENCY, TIDE_CALLER_QUEUE). */
export function callerSlots(): CallerSlots {
  const env = httpEnv();
  shared ??= new CallerSlots(env.TIDE_CALLER_CONCURRENCY, env.TIDE_CALLER_QUEUE, CALLER_MAX_WAIT_MS);
  return shared;
}
