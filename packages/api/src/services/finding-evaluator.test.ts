import type { Db } from "@tide/db";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FindingEvaluator } from "./finding-evaluator";

afterEach(() => {
  vi.useRealTimers();
});

describe("FindingEvaluator duty cycle", () => {
  it("pauses after each evaluation so evaluating takes at most `duty` of the wall time", async () => {
    vi.useFakeTimers();
    const starts: number[] = [];
    const evaluator = new FindingEvaluator({} as Db, {
      duty: 0.25,
      intervalMs: 0,
      evaluate: async () => {
        starts.push(Date.now());
        await new Promise((r) => setTimeout(r, 100)); // each evaluation takes 100 ms
      },
    });
    const t0 = Date.now();
    for (const h of ["host_a", "host_b", "host_c"]) evaluator.schedule(h);
    await vi.advanceTimersByTimeAsync(2_000);
    // 100 ms evaluating, then 300 ms paused (25 %), for each host in turn.
    expect(starts.map((t) => t - t0)).toEqual([0, 400, 800]);
    await evaluator.idle();
    evaluator.stop();
  });

  it("never pauses with duty 1", async () => {
    vi.useFakeTimers();
    const starts: number[] = [];
    const evaluator = new FindingEvaluator({} as Db, {
      duty: 1,
      intervalMs: 0,
      evaluate: async () => {
        starts.push(Date.now());
        await new Promise((r) => setTimeout(r, 100));
      },
    });
    const t0 = Date.now();
    for (const h of ["host_a", "host_b"]) evaluator.schedule(h);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(starts.map((t) => t - t0)).toEqual([0, 100]);
    evaluator.stop();
  });
});
