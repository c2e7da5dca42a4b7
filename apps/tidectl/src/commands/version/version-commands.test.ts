import type { ChangeReport } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { outcome, reportText } from "./index";

const flows = (s: number, a: number, l: number) => ({ secondChance: s, alternateHash: a, lastResort: l });
const flow = (hostname: string, clientPort: number) => ({
  hostname,
  clientAddress: "10.77.9.2",
  clientPort,
  address: "10.77.0.1",
  port: 8080,
  packets: 4,
  lastAt: "2026-11-28T10:00:12.000Z",
});

function report(verdict: "none_broken" | "broken" | "unknown", broken: number | null): ChangeReport {
  return {
    tableVersionId: "tv_0000000000012",
    poolId: "pool_000000000001",
    version: 12,
    status: "done",
    openedAt: "2026-11-28T10:00:00.000Z",
    closedAt: "2026-11-28T10:00:25.000Z",
    predicted: null,
    report: {
      windowStart: "2026-11-28T10:00:00.000Z",
      windowEnd: "2026-11-28T10:00:25.000Z",
      ended: "served by 2/2 directors, then 20 s",
      directors: [
        { directorId: "dir_000000000001", hostname: "lab-director-1", servedAt: "2026-11-28T10:00:05.000Z" },
      ],
      proxies: [
        {
          proxyId: null,
          hostname: "lab-proxy-1",
          reported: verdict !== "unknown",
          reason: verdict === "unknown" ? "no counters reading after the window" : null,
          packets: flows(10, 4, broken ?? 0),
          flows: flows(2, 1, broken ?? 0),
        },
      ],
      flows: flows(2, 1, broken ?? 0),
      listed: {
        secondChance: [flow("lab-proxy-1", 40001), flow("lab-proxy-1", 40002)],
        alternateHash: [flow("lab-proxy-1", 40002)],
        lastResort: broken ? [flow("lab-proxy-1", 40009)] : [],
      },
      atLeast: false,
      broken,
      verdict,
    },
  };
}

describe("tidectl version report text", () => {
  it("says the outcome in one word, as the console's badge", () => {
    expect(outcome(undefined)).toBe("-");
    expect(outcome(report("none_broken", 0))).toBe("0 broken");
    expect(outcome(report("broken", 1))).toBe("1 broken");
    expect(outcome(report("unknown", null))).toBe("unknown");
    expect(outcome({ ...report("none_broken", 0), status: "closing", report: null })).toBe("closing");
  });

  it("prints the headline, the window, per proxy figures and the named flows", () => {
    const t = reportText(report("broken", 1));
    expect(t).toContain("1 connections broken");
    expect(t).toContain("(served by 2/2 directors, then 20 s)");
    expect(t).toMatch(/lab-director-1\s+2026-11-28T10:00:05.000Z/);
    expect(t).toMatch(/lab-proxy-1\s+yes\s+2\s+1\s+1\s+10\/4\/1/);
    expect(t).toMatch(
      /broken \(last resort\), most recent first:\n.*\n10\.77\.9\.2:40009\s+10\.77\.0\.1:8080\s+lab-proxy-1/,
    );
    expect(reportText(report("none_broken", 0))).toContain("0 connections broken");
    expect(reportText(report("unknown", null))).toContain(
      "not known: lab-proxy-1 (no counters reading after the window)",
    );
  });
});
