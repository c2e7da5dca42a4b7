import type { AgentHealthReport, HealthCheckJob, HealthcheckRequest } from "@tide/contracts";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "@tide/devstack";
import {
  HealthChecker,
  INITIAL_RISE_FALL,
  nextRiseFall,
  roundRequests,
  type RiseFall,
} from "./health-checker";

const NOW = new Date("2026-11-23T18:00:00.000Z");

function rounds(results: boolean[], rise = 3, fall = 3): (boolean | null)[] {
  let s: RiseFall = INITIAL_RISE_FALL;
  return results.map((ok) => (s = nextRiseFall(s, ok, rise, fall, NOW)).up);
}

describe("rise and fall", () => {
  it("says nothing until rise passes or fall failures in a row", () => {
    expect(rounds([true, true, true])).toEqual([null, null, true]);
    expect(rounds([false, false, false])).toEqual([null, null, false]);
    expect(rounds([true, false, true, false])).toEqual([null, null, null, null]);
  });

  it("needs fall failures in a row to go down and rise passes in a row to come back", () => {
    expect(rounds([true, true, true, false, false, true, false, false, false, true, true, true])).toEqual([
      null,
      null,
      true,
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      true,
    ]);
    expect(rounds([false, true], 1, 1)).toEqual([false, true]);
  });

  it("stamps the time of a flip only", () => {
    let s = nextRiseFall(INITIAL_RISE_FALL, true, 1, 1, NOW);
    expect(s.since).toEqual(NOW);
    s = nextRiseFall(s, true, 1, 1, new Date(NOW.getTime() + 1000));
    expect(s.since).toEqual(NOW);
  });
});

const job = (
  over: Partial<HealthCheckJob["check"]> = {},
  proxies = ["10.0.0.1", "10.0.0.2"],
): HealthCheckJob => ({
  poolId: "pool_www",
  pool: "www",
  guePort: 19523,
  check: {
    enabled: true,
    intervalMs: 20,
    timeoutMs: 10,
    rise: 2,
    fall: 2,
    gue: true,
    service: null,
    ...over,
  },
  proxies: proxies.map((address, i) => ({ proxyId: `prx_${i}`, address, hostname: `proxy-${i}` })),
});

describe("roundRequests", () => {
  it("checks the GUE path and the pool's service on the proxy's own address", () => {
    expect(
      roundRequests(job({ service: { kind: "http", port: 80, path: "/hc", expectStatus: 204 } }), "10.0.0.9"),
    ).toEqual([
      { kind: "gue", target: "10.0.0.9", port: 19523, timeoutMs: 10 },
      { kind: "http", target: "10.0.0.9", port: 80, path: "/hc", expectStatus: 204, timeoutMs: 10 },
    ]);
    expect(roundRequests(job({ gue: false, service: { kind: "tcp", port: 443 } }), "10.0.0.9")).toEqual([
      { kind: "tcp", target: "10.0.0.9", port: 443, timeoutMs: 10 },
    ]);
  });
});

describe("HealthChecker", () => {
  let checker: HealthChecker | null = null;
  afterEach(() => checker?.stop());

  const until = (cond: () => boolean, timeoutMs = 3000) =>
    waitFor("the checker", cond, { timeoutMs, intervalMs: 10 });

  it("finds the failing proxy, reports the flip at once with its failing check, and follows job changes", async () => {
    const reports: AgentHealthReport[] = [];
    const asked: Omit<HealthcheckRequest, "id">[] = [];
    const logs: string[] = [];
    checker = new HealthChecker({
      runner: {
        check: (r) => {
          asked.push(r);
          const ok = r.target !== "10.0.0.2";
          return Promise.resolve({
            id: 1,
            ok,
            latencyUs: ok ? 300 : null,
            detail: ok ? "echo reply" : "timeout after 10 ms",
          });
        },
      },
      report: (r) => {
        reports.push(r);
        return Promise.resolve();
      },
      log: (l) => logs.push(l),
      reportEveryMs: 60_000, // only flips report in this test
    });
    checker.setJobs([job()]);
    await until(() => checker!.views().every((v) => v.up !== null));
    expect(checker.views().map((v) => [v.proxyId, v.up])).toEqual([
      ["prx_0", true],
      ["prx_1", false],
    ]);
    await until(() => reports.some((r) => r.views.some((v) => v.up === false)));
    const down = reports
      .find((r) => r.views.some((v) => v.up === false))!
      .views.find((v) => v.proxyId === "prx_1")!;
    expect(down.checks).toEqual([
      expect.objectContaining({ kind: "gue", ok: false, detail: "timeout after 10 ms" }),
    ]);
    expect(logs).toContain("health: proxy-1 (10.0.0.2) of pool www is down (gue: timeout after 10 ms)");

    // prx_1 leaves the pool's rotation: no more checks of it, no more views.
    checker.setJobs([job({}, ["10.0.0.1"])]);
    expect(checker.views().map((v) => v.proxyId)).toEqual(["prx_0"]);
    const before = asked.length;
    await until(() => asked.length > before + 2);
    expect(asked.slice(before).every((r) => r.target === "10.0.0.1")).toBe(true);
    // Its rise/fall state survived the job update: still up, no new flip.
    expect(checker.views()[0]!.up).toBe(true);

    checker.setJobs([]);
    expect(checker.views()).toEqual([]);
  });

  it("says so when the console does not take a report, and goes on checking", async () => {
    const logs: string[] = [];
    let rounds = 0;
    checker = new HealthChecker({
      runner: {
        check: () => {
          rounds++;
          return Promise.resolve({ id: 1, ok: true, latencyUs: 1, detail: "echo reply" });
        },
      },
      report: () => Promise.reject(new Error("HTTP 503")),
      log: (l) => logs.push(l),
      reportEveryMs: 30,
    });
    checker.setJobs([job({}, ["10.0.0.1"])]);
    await until(() => logs.some((l) => l.startsWith("health report to the console failed (HTTP 503)")));
    const r = rounds;
    await until(() => rounds > r + 2);
    expect(logs.filter((l) => l.startsWith("health report"))).toHaveLength(1); // throttled
  });
});
