import { describe, expect, it } from "vitest";
import {
  LIVE_RETRY_MAX_MS,
  LIVE_RETRY_MIN_MS,
  liveRetryMs,
  openLiveSource,
  type LiveEventSource,
  type LiveSourceDeps,
} from "./live-source";

/** A stand-in for the browser's EventSource: the test fires its events and sets its state. */
class FakeSource implements LiveEventSource {
  readyState = 0;
  closed = false;
  private listeners = new Map<string, ((e: MessageEvent<string>) => void)[]>();
  constructor(readonly url: string) {}
  addEventListener(type: string, listener: (e: MessageEvent<string>) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  close() {
    this.closed = true;
    this.readyState = 2;
  }
  fire(type: string, data = "") {
    for (const l of this.listeners.get(type) ?? []) l({ data } as MessageEvent<string>);
  }
  /** The browser gave up (a 502 or 503 answer): error with readyState CLOSED. */
  failForGood() {
    this.readyState = 2;
    this.fire("error");
  }
  /** A dropped connection the browser retries itself: error with readyState CONNECTING. */
  drop() {
    this.readyState = 0;
    this.fire("error");
  }
}

function harness() {
  const sources: FakeSource[] = [];
  const timers: { fn: () => void; ms: number; cleared: boolean }[] = [];
  const deps: LiveSourceDeps = {
    create: (url) => {
      const s = new FakeSource(url);
      sources.push(s);
      return s;
    },
    setTimeout: (fn, ms) => {
      const t = { fn, ms, cleared: false };
      timers.push(t);
      return t;
    },
    clearTimeout: (t) => {
      (t as { cleared: boolean }).cleared = true;
    },
    random: () => 0,
  };
  const pending = () => timers.filter((t) => !t.cleared);
  /** Run the last pending timer (the reconnect). */
  const runTimer = () => {
    const t = pending().at(-1)!;
    t.cleared = true;
    t.fn();
  };
  return { sources, timers, pending, runTimer, deps };
}

describe("liveRetryMs", () => {
  it("doubles from 1 s to 30 s with up to 20 % jitter", () => {
    expect([1, 2, 3, 5, 6, 20].map((n) => liveRetryMs(n, () => 0))).toEqual([
      1_000,
      2_000,
      4_000,
      16_000,
      LIVE_RETRY_MAX_MS,
      LIVE_RETRY_MAX_MS,
    ]);
    expect(liveRetryMs(1, () => 0.999)).toBe(Math.round(LIVE_RETRY_MIN_MS * 1.1998));
    expect(liveRetryMs(20, () => 0.5)).toBe(LIVE_RETRY_MAX_MS * 1.1);
  });
});

describe("openLiveSource", () => {
  it("reopens a source the browser closed, after a growing backoff reset by an open", () => {
    const h = harness();
    const seen: string[] = [];
    openLiveSource(
      "/api/live/pools/p1",
      {
        onOpen: () => seen.push("open"),
        onError: () => seen.push("error"),
        events: { changed: (e) => seen.push(`changed ${e.data}`) },
      },
      h.deps,
    );
    expect(h.sources).toHaveLength(1);
    h.sources[0]!.fire("open");
    h.sources[0]!.fire("changed", "a");
    h.sources[0]!.failForGood();
    expect(h.sources[0]!.closed).toBe(true);
    expect(h.pending().map((t) => t.ms)).toEqual([1_000]);
    expect(h.sources).toHaveLength(1); // not before the backoff

    h.runTimer();
    expect(h.sources).toHaveLength(2);
    expect(h.sources[1]!.url).toBe("/api/live/pools/p1");
    h.sources[1]!.failForGood(); // still refused: the wait doubles
    expect(h.pending().map((t) => t.ms)).toEqual([2_000]);

    h.runTimer();
    h.sources[2]!.fire("open");
    h.sources[2]!.fire("changed", "b"); // the new source's events reach the same handlers
    h.sources[2]!.failForGood(); // opened in between: back to the shortest wait
    expect(h.pending().map((t) => t.ms)).toEqual([1_000]);
    expect(seen).toEqual(["open", "changed a", "error", "error", "open", "changed b", "error"]);
  });

  it("leaves a dropped connection to the browser's own retry", () => {
    const h = harness();
    let errors = 0;
    openLiveSource("/api/live/hosts/h1", { onError: () => errors++, events: {} }, h.deps);
    h.sources[0]!.drop();
    expect(errors).toBe(1);
    expect(h.sources[0]!.closed).toBe(false);
    expect(h.pending()).toHaveLength(0);
  });

  it("schedules one reopen however many errors the closed source reports", () => {
    const h = harness();
    openLiveSource("/x", { events: {} }, h.deps);
    h.sources[0]!.failForGood();
    h.sources[0]!.fire("error");
    expect(h.pending()).toHaveLength(1);
  });

  it("stops for good when closed: the source, and a pending reopen", () => {
    const h = harness();
    const close = openLiveSource("/x", { events: {} }, h.deps);
    h.sources[0]!.failForGood();
    expect(h.pending()).toHaveLength(1);
    close();
    expect(h.pending()).toHaveLength(0);
    expect(h.sources).toHaveLength(1);

    const h2 = harness();
    const close2 = openLiveSource("/x", { events: {} }, h2.deps);
    close2();
    expect(h2.sources[0]!.closed).toBe(true);
    h2.sources[0]!.fire("error"); // a late error after close reopens nothing
    expect(h2.pending()).toHaveLength(0);
  });
});
