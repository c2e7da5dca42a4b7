import type { Observation } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { EvaluationWindowCache } from "./evaluation-window-cache";

const T0 = Date.parse("2026-11-27T06:00:00.000Z");
/** A stand-in sample at T0 + t s (the cache reads sampledAt only). */
const s = (t: number) => ({ sampledAt: new Date(T0 + t * 1000).toISOString(), t }) as unknown as Observation;
const times = (w: Observation[] | null) => w?.map((o) => (o as unknown as { t: number }).t) ?? null;
const shape = (newest: number, count: number, chunked = false) => ({
  newest: new Date(T0 + newest * 1000),
  count,
  chunked,
});

describe("EvaluationWindowCache", () => {
  it("keeps the last `seconds` before the newest sample, inclusive, in time order", () => {
    const c = new EvaluationWindowCache(60, 1_000);
    c.add("a", [0, 1, 2].map(s));
    c.add("a", [4, 3].map(s)); // out of order
    c.add("a", [3].map(s)); // an instant already cached
    expect(times(c.window("a", shape(4, 5)))).toEqual([0, 1, 2, 3, 4]);
    c.add(
      "a",
      Array.from({ length: 60 }, (_, i) => s(5 + i)),
    );
    // Newest 64: from 4 on (64 - 60), 61 samples, as the database's window counts them.
    expect(times(c.window("a", shape(64, 61)))).toEqual(Array.from({ length: 61 }, (_, i) => 4 + i));
    expect(c.size).toBe(61);
  });

  it("gives the window only when the database's shape matches it", () => {
    const c = new EvaluationWindowCache(60, 1_000);
    c.add("a", [0, 1, 2].map(s));
    expect(c.window("a", shape(2, 4))).toBeNull(); // another process stored one more
    expect(c.window("a", shape(3, 4))).toBeNull(); // a newer sample this process did not see
    expect(c.window("a", shape(2, 3, true))).toBeNull(); // compacted samples in the window
    expect(c.window("a", { newest: null, count: 0, chunked: false })).toBeNull();
    expect(c.window("b", shape(2, 3))).toBeNull();
    expect(times(c.window("a", shape(2, 3)))).toEqual([0, 1, 2]);
  });

  it("replaces a host's window with what the database read", () => {
    const c = new EvaluationWindowCache(60, 1_000);
    c.add("a", [0, 2].map(s));
    c.fill(
      "a",
      [0, 1, 2].map((t) => ({ sampledAt: new Date(T0 + t * 1000), payload: s(t) })),
    );
    expect(times(c.window("a", shape(2, 3)))).toEqual([0, 1, 2]);
    expect(c.size).toBe(3);
  });

  it("stays within its bound, dropping the least recently used host first", () => {
    const c = new EvaluationWindowCache(60, 10);
    c.add("a", [0, 1, 2, 3].map(s));
    c.add("b", [0, 1, 2, 3].map(s));
    expect(c.window("a", shape(3, 4))).not.toBeNull(); // a is now the most recently used
    c.add("c", [0, 1, 2, 3].map(s));
    expect(c.size).toBe(8);
    expect(c.has("a")).toBe(true);
    expect(c.has("b")).toBe(false);
    expect(c.has("c")).toBe(true);
    const off = new EvaluationWindowCache(60, 0);
    off.add("a", [0].map(s));
    expect(off.has("a")).toBe(false);
  });
});
