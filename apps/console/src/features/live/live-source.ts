/**
 * The live pages' push channel: an EventSource that is opened again when the browser gives up on it.
 *
 * EventSource reconnects by itself after a dropped connection or a refused one, but an answer that
 * is not a 200 event stream "fails the connection" for good (HTML spec): a load balancer's 502 for
 * a console that was killed, the console's own 503 while its database is away. The page then said
 * "offline" until it was reloaded, although another console (or the same one, back) could serve it.
 * Here a source the browser closed is replaced after a backoff, 1 s doubling to 30 s with up to
 * 20 % jitter so the browsers of a whole operations floor do not come back in step; a source that
 * opens resets the backoff.
 */

export const LIVE_RETRY_MIN_MS = 1_000;
export const LIVE_RETRY_MAX_MS = 30_000;

/** The wait before reopening after `failures` closed sources in a row (failures >= 1). */
export function liveRetryMs(failures: number, random: () => number = Math.random): number {
  const base = Math.min(LIVE_RETRY_MAX_MS, LIVE_RETRY_MIN_MS * 2 ** Math.max(0, failures - 1));
  return Math.round(base * (1 + 0.2 * random()));
}

/** What openLiveSource needs of EventSource (the browser's, or a test's). */
export interface LiveEventSource {
  readonly readyState: number;
  addEventListener(type: string, listener: (event: MessageEvent<string>) => void): void;
  close(): void;
}

export interface LiveSourceHandlers {
  /** A source opened (the first one, or one after a reconnect). */
  onOpen?: () => void;
  /** A source failed: the browser retries, or this reopens it after a backoff. */
  onError?: () => void;
  /** Named server-sent events and their listeners. */
  events: Record<string, (event: MessageEvent<string>) => void>;
}

export interface LiveSourceDeps {
  create: (url: string) => LiveEventSource;
  setTimeout: (fn: () => void, ms: number) => unknown;
  clearTimeout: (timer: unknown) => void;
  random: () => number;
}

/** EventSource.CLOSED: the browser will not reconnect this source by itself. */
const CLOSED = 2;

const browserDeps = (): LiveSourceDeps => ({
  create: (url) => new EventSource(url),
  setTimeout: (fn, ms) => window.setTimeout(fn, ms),
  clearTimeout: (timer) => window.clearTimeout(timer as number),
  random: Math.random,
});

/** Open `url` and keep it open until the returned function is called (an effect's cleanup). */
export function openLiveSource(
  url: string,
  handlers: LiveSourceHandlers,
  deps: LiveSourceDeps = browserDeps(),
): () => void {
  let source: LiveEventSource;
  let timer: unknown = null;
  let failures = 0;
  let stopped = false;
  const connect = () => {
    timer = null;
    const s = deps.create(url);
    source = s;
    s.addEventListener("open", () => {
      failures = 0;
      handlers.onOpen?.();
    });
    s.addEventListener("error", () => {
      handlers.onError?.();
      if (stopped || source !== s || s.readyState !== CLOSED || timer !== null) return;
      s.close();
      timer = deps.setTimeout(connect, liveRetryMs(++failures, deps.random));
    });
    for (const [type, listener] of Object.entries(handlers.events)) s.addEventListener(type, listener);
  };
  connect();
  return () => {
    stopped = true;
    if (timer !== null) deps.clearTimeout(timer);
    timer = null;
    source.close();
  };
}
