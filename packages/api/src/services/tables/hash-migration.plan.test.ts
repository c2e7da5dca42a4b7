import { describe, expect, it } from "vitest";
import { HASH_MIGRATION_MIN_MS, planAutoFinish } from "./hash-migration.plan";

const startedAt = new Date("2026-11-28T10:00:00Z");
const after = (ms: number) => new Date(startedAt.getTime() + ms);
const quiet = { acceptedAlternateHashPerS: 0, reportingProxies: 3, proxies: 3 };

describe("planAutoFinish", () => {
  it("waits out the minimum time even when quiet, and says how long is left", () => {
    const plan = planAutoFinish({ startedAt, now: after(20_000), activity: quiet });
    expect(plan).toMatchObject({ finish: false, waitMs: HASH_MIGRATION_MIN_MS - 20_000 });
  });

  it("finishes once every proxy reported a quiet window after the minimum time", () => {
    const plan = planAutoFinish({ startedAt, now: after(HASH_MIGRATION_MIN_MS), activity: quiet });
    expect(plan.finish).toBe(true);
    expect(plan.why).toContain("3/3 proxies");
  });

  it("keeps migrating while packets still arrive by the old fields", () => {
    const plan = planAutoFinish({
      startedAt,
      now: after(10 * HASH_MIGRATION_MIN_MS),
      activity: { ...quiet, acceptedAlternateHashPerS: 0.4 },
    });
    expect(plan).toMatchObject({
      finish: false,
      why: "0.4 packets/s still reach their proxy by the old fields",
    });
  });

  it("never decides for proxies it has not heard from", () => {
    const partial = planAutoFinish({
      startedAt,
      now: after(10 * HASH_MIGRATION_MIN_MS),
      activity: { ...quiet, reportingProxies: 2 },
    });
    expect(partial).toMatchObject({ finish: false, why: "2/3 proxies report alternate-hash counters" });
    const unknown = planAutoFinish({
      startedAt,
      now: after(10 * HASH_MIGRATION_MIN_MS),
      activity: { acceptedAlternateHashPerS: null, reportingProxies: 0, proxies: 3 },
    });
    expect(unknown.finish).toBe(false);
    expect(
      planAutoFinish({
        startedAt,
        now: after(HASH_MIGRATION_MIN_MS),
        activity: { ...quiet, proxies: 0, reportingProxies: 0 },
      }).finish,
    ).toBe(false);
  });
});
