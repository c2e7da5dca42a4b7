import { HEALTH_VIEW_STALE_AFTER_MS, type HealthCheckOutcome } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import {
  isDecision,
  isHold,
  planProxyHealth,
  RECOVER_HOLD_MAX_MS,
  RECOVER_HOLD_MS,
  recoverHoldMs,
  type DirectorView,
  type ProxyHealthInput,
} from "./proxy-health.plan";

const NOW = new Date("2026-11-23T18:00:00.000Z");
const ago = (ms: number) => new Date(NOW.getTime() - ms);

const gueTimeout: HealthCheckOutcome = {
  kind: "gue",
  ok: false,
  latencyUs: null,
  detail: "timeout after 1000 ms",
  at: ago(500).toISOString(),
};
const httpOk: HealthCheckOutcome = {
  kind: "http",
  ok: true,
  latencyUs: 900,
  detail: "HTTP 200",
  at: ago(500).toISOString(),
};

/** A director's view, reported `reportedAgoMs` ago, its verdict `up` since `since` (default: now). */
const view = (
  director: string,
  up: boolean | null,
  reportedAgoMs = 1_000,
  since: Date | null = NOW,
): DirectorView => ({
  director,
  up,
  since,
  reportedAt: ago(reportedAgoMs),
  checks:
    up === false
      ? [gueTimeout, httpOk]
      : [{ ...gueTimeout, ok: true, detail: "echo reply", latencyUs: 300 }, httpOk],
});

const proxy = (over: Partial<ProxyHealthInput>): ProxyHealthInput => ({
  proxyId: "prx_1",
  hostname: "proxy-1",
  healthy: true,
  pinned: null,
  changedAt: ago(3_600_000),
  recentFlips: 0,
  views: [],
  ...over,
});

describe("planProxyHealth: combining the directors' views", () => {
  it("marks a proxy unhealthy when the directors agree, naming the failing checks", () => {
    const d = planProxyHealth(proxy({ views: [view("dir-1", false), view("dir-2", false)] }), NOW);
    expect(isDecision(d)).toBe(true);
    expect(d).toMatchObject({ healthy: false, pinned: false });
    expect(isDecision(d) && d.failing).toEqual([
      "dir-1 gue: timeout after 1000 ms",
      "dir-2 gue: timeout after 1000 ms",
    ]);
    expect(isDecision(d) && d.reason).toBe(
      "down on 2 of 2 directors (dir-1, dir-2): dir-1 gue: timeout after 1000 ms; dir-2 gue: timeout after 1000 ms",
    );
  });

  it("keeps the current health on a tie, either way", () => {
    const split = [view("dir-1", false), view("dir-2", true)];
    expect(planProxyHealth(proxy({ views: split }), NOW)).toBeNull();
    expect(planProxyHealth(proxy({ healthy: false, views: split }), NOW)).toBeNull();
  });

  it("follows a strict majority", () => {
    const views = [view("dir-1", false), view("dir-2", false), view("dir-3", true)];
    expect(planProxyHealth(proxy({ views }), NOW)).toMatchObject({ healthy: false });
  });

  it("does not count stale views or views without a verdict yet", () => {
    const stale = view("dir-1", false, HEALTH_VIEW_STALE_AFTER_MS + 1);
    expect(planProxyHealth(proxy({ views: [stale] }), NOW)).toBeNull();
    // A silent director does not outvote a live one: the live one's view decides.
    expect(planProxyHealth(proxy({ views: [stale, view("dir-2", false)] }), NOW)).toMatchObject({
      healthy: false,
    });
    expect(planProxyHealth(proxy({ views: [view("dir-1", null), view("dir-2", null)] }), NOW)).toBeNull();
  });

  it("changes nothing when the views agree with the current health", () => {
    expect(planProxyHealth(proxy({ views: [view("dir-1", true)] }), NOW)).toBeNull();
    expect(planProxyHealth(proxy({ healthy: false, views: [view("dir-1", false)] }), NOW)).toBeNull();
  });
});

describe("planProxyHealth: flapping", () => {
  it("goes unhealthy at once, however recently it recovered", () => {
    const p = proxy({ changedAt: ago(100), recentFlips: 6, views: [view("dir-1", false)] });
    expect(planProxyHealth(p, NOW)).toMatchObject({ healthy: false });
  });

  it("recovers only after a hold that doubles with each recent flip", () => {
    const up = [view("dir-1", true), view("dir-2", true)];
    const p = (changedAgo: number, flips: number) =>
      planProxyHealth(
        proxy({ healthy: false, changedAt: ago(changedAgo), recentFlips: flips, views: up }),
        NOW,
      );
    expect(p(RECOVER_HOLD_MS + 1, 0)).toMatchObject({
      healthy: true,
      reason: "up on 2 of 2 directors (dir-1, dir-2)",
    });
    const held = p(RECOVER_HOLD_MS + 1, 2);
    expect(isDecision(held)).toBe(false);
    expect(held).toEqual({
      proxyId: "prx_1",
      until: new Date(NOW.getTime() - RECOVER_HOLD_MS - 1 + 4 * RECOVER_HOLD_MS),
      holdMs: 4 * RECOVER_HOLD_MS,
      recentFlips: 2,
      reason:
        "up on 2 of 2 directors (dir-1, dir-2), held until 18:00:14Z: flapped 2 times in the last 10 min",
    });
    expect(p(4 * RECOVER_HOLD_MS, 2)).toMatchObject({ healthy: true });
    expect(recoverHoldMs(50)).toBe(RECOVER_HOLD_MAX_MS);
  });
});

describe("planProxyHealth: a recovery hold, and its release", () => {
  // Went down 30 s ago after 3 flips in the window: held 5 s x 2^3 = 40 s, until 18:00:10Z.
  const changedAt = ago(30_000);
  const until = new Date(changedAt.getTime() + 8 * RECOVER_HOLD_MS);
  const heldProxy = (views: DirectorView[]) => proxy({ healthy: false, changedAt, recentFlips: 3, views });
  const cameUp = ago(20_000);

  it("holds a proxy whose checks pass, saying until when and why", () => {
    const d = planProxyHealth(heldProxy([view("dir-1", true, 1_000, cameUp)]), NOW);
    expect(isHold(d)).toBe(true);
    expect(d).toEqual({
      proxyId: "prx_1",
      until,
      holdMs: 40_000,
      recentFlips: 3,
      reason: "up on 1 of 1 directors (dir-1), held until 18:00:10Z: flapped 3 times in the last 10 min",
    });
    // One flip (the fall itself): 10 s, said as "once".
    expect(
      planProxyHealth(
        proxy({ healthy: false, changedAt: ago(4_000), recentFlips: 1, views: [view("dir-1", true)] }),
        NOW,
      ),
    ).toMatchObject({
      holdMs: 2 * RECOVER_HOLD_MS,
      reason: "up on 1 of 1 directors (dir-1), held until 18:00:06Z: flapped once in the last 10 min",
    });
  });

  it("releases it at the hold's end, to the millisecond, and says it was held", () => {
    const views = [view("dir-1", true, 1_000, cameUp), view("dir-2", true, 1_000, cameUp)];
    const justBefore = new Date(until.getTime() - 1);
    expect(isHold(planProxyHealth(heldProxy(views), justBefore))).toBe(true);
    const released = planProxyHealth(heldProxy(views), until);
    expect(released).toEqual({
      proxyId: "prx_1",
      healthy: true,
      reason:
        "up on 2 of 2 directors (dir-1, dir-2); released from a hold until 18:00:10Z (flapped 3 times in the last 10 min)",
      failing: [],
      pinned: false,
      releasedFromHold: until,
    });
  });

  it("does not call a recovery held when the checks came up after the hold had ended", () => {
    const late = new Date(until.getTime() + 1_000);
    const d = planProxyHealth(heldProxy([view("dir-1", true, 0, late)]), new Date(late.getTime() + 500));
    expect(d).toMatchObject({
      healthy: true,
      releasedFromHold: null,
      reason: "up on 1 of 1 directors (dir-1)",
    });
    // A view that does not say since when is not taken as proof of a hold either.
    const unknown = planProxyHealth(heldProxy([view("dir-1", true, 0, null)]), late);
    expect(unknown).toMatchObject({ healthy: true, releasedFromHold: null });
  });

  it("dates the recovery from when the up views first outvoted the down ones", () => {
    // dir-1 has been up all along; the proxy was out by dir-2 and dir-3. dir-2 came up after the
    // hold ended: only then did up outvote down (2 to 1), so no hold kept it out.
    const late = new Date(until.getTime() + 1_000);
    const views = [
      view("dir-1", true, 1_000, ago(3_600_000)),
      view("dir-2", true, 1_000, late),
      view("dir-3", false, 1_000, ago(40_000)),
    ];
    expect(planProxyHealth(heldProxy(views), new Date(late.getTime() + 500))).toMatchObject({
      healthy: true,
      releasedFromHold: null,
    });
    // dir-2 up before the hold ended: the hold kept it out.
    views[1] = view("dir-2", true, 1_000, cameUp);
    expect(planProxyHealth(heldProxy(views), late)).toMatchObject({ healthy: true, releasedFromHold: until });
  });
});

describe("planProxyHealth: an operator's pin", () => {
  it("wins over the checks, both ways, and is said to be a pin", () => {
    expect(planProxyHealth(proxy({ pinned: false, views: [view("dir-1", true)] }), NOW)).toMatchObject({
      healthy: false,
      pinned: true,
      reason: "pinned unhealthy by an operator",
    });
    expect(
      planProxyHealth(proxy({ healthy: false, pinned: true, views: [view("dir-1", false)] }), NOW),
    ).toMatchObject({
      healthy: true,
      pinned: true,
    });
    expect(planProxyHealth(proxy({ pinned: true, views: [view("dir-1", false)] }), NOW)).toBeNull();
  });
});
