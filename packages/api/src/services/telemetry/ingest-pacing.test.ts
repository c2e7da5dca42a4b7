import { describe, expect, it } from "vitest";
import { ACTIVE_AGENT_MS, batchIntervalFor, BATCH_INTERVAL_MAX_MS, IngestPacer } from "./ingest-pacing";

describe("batchIntervalFor", () => {
  it.each([
    [0, 1_000],
    [1, 1_000],
    [100, 1_000],
    [101, 2_000],
    [1_000, 10_000],
    [1_001, BATCH_INTERVAL_MAX_MS],
    [100_000, BATCH_INTERVAL_MAX_MS],
  ])("%i active agents -> %i ms", (hosts, ms) => {
    expect(batchIntervalFor(hosts)).toBe(ms);
  });
});

describe("IngestPacer", () => {
  it("asks nothing of a small fleet, batches a large one, and forgets agents that went quiet", () => {
    let now = 0;
    const pacer = new IngestPacer(() => now);
    expect(pacer.batchArrived("host_0")).toBe(0); // one sample per batch: today's behaviour
    for (let i = 1; i < 500; i++) pacer.batchArrived(`host_${i}`);
    expect(pacer.activeHosts).toBe(500);
    expect(pacer.batchArrived("host_0")).toBe(5_000);
    // The same agents again count once.
    for (let i = 0; i < 500; i++) pacer.batchArrived(`host_${i}`);
    expect(pacer.batchArrived("host_1")).toBe(5_000);
    // All but one stop sending: after ACTIVE_AGENT_MS they no longer count.
    now += ACTIVE_AGENT_MS + 1;
    expect(pacer.batchArrived("host_0")).toBe(0);
    expect(pacer.activeHosts).toBe(1);
  });
});
