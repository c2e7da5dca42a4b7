import type { ChangeReport, ChangeReportBody, ConnectionImpact } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import {
  badgeOf,
  directorLine,
  endpoint,
  flowCount,
  flowLine,
  headlineOf,
  perKindLine,
  predictedLines,
  unknownReasons,
  windowLine,
} from "./change-report-text";

const zero = { secondChance: 0, alternateHash: 0, lastResort: 0 };
type Proxy = ChangeReportBody["proxies"][number];
const proxy = (i: number, over: Partial<Proxy> = {}): Proxy => ({
  proxyId: `prx_${i}`,
  hostname: `proxy-www-0${i}.dc1.example.net`,
  reported: true,
  reason: null,
  packets: zero,
  flows: zero,
  ...over,
});

function body(over: Partial<ChangeReportBody> = {}): ChangeReportBody {
  return {
    windowStart: "2026-11-28T09:51:02.120Z",
    windowEnd: "2026-11-28T09:51:26.480Z",
    ended: "served by 2/2 directors, then 20 s",
    directors: [],
    proxies: [proxy(1), proxy(2)],
    flows: zero,
    listed: { secondChance: [], alternateHash: [], lastResort: [] },
    atLeast: false,
    broken: 0,
    verdict: "none_broken",
    ...over,
  };
}

function report(over: Partial<ChangeReport> = {}): ChangeReport {
  return {
    tableVersionId: "tv_7",
    poolId: "pool_1",
    version: 7,
    status: "done",
    openedAt: "2026-11-28T09:51:02.120Z",
    closedAt: "2026-11-28T09:51:26.480Z",
    predicted: null,
    report: body(),
    ...over,
  };
}

const impact = (broken: number | null, second: number | null, exact = true): ConnectionImpact => ({
  kept: { count: 0, exact },
  viaSecondChance: { count: second, exact },
  broken: { count: broken, exact: true },
  proxies: [],
  unknown: [],
  estimate: exact ? null : "in proportion to rows",
});

describe("change report badge", () => {
  it.each([
    ["no report (a version from before reports)", null, "—", "none"],
    [
      "measuring: since when, in UTC",
      report({ status: "measuring", closedAt: null, report: null }),
      "measuring since 09:51:02",
      "pending",
    ],
    ["closing", report({ status: "closing", report: null }), "closing…", "pending"],
    ["none broken", report(), "0 broken", "ok"],
    [
      "broken",
      report({ report: body({ broken: 3, verdict: "broken", flows: { ...zero, lastResort: 3 } }) }),
      "3 broken",
      "broken",
    ],
    [
      "broken, a capped reading: a floor",
      report({
        report: body({ broken: 3, atLeast: true, verdict: "broken", flows: { ...zero, lastResort: 3 } }),
      }),
      "at least 3 broken",
      "broken",
    ],
    [
      "broken while a proxy did not report: the resets seen are a floor",
      report({
        report: body({
          broken: null,
          verdict: "broken",
          flows: { ...zero, lastResort: 2 },
          proxies: [proxy(1), proxy(2, { reported: false, reason: "no flows reading after the window" })],
        }),
      }),
      "at least 2 broken",
      "broken",
    ],
    [
      "unknown",
      report({
        report: body({
          broken: null,
          verdict: "unknown",
          proxies: [
            proxy(1, { reported: false, reason: "its agent or tide-redirect does not report flows" }),
          ],
        }),
      }),
      "unknown",
      "unknown",
    ],
  ] as const)("%s", (_, r, text, tone) => {
    const b = badgeOf(r);
    expect(b.text).toBe(text);
    expect(b.tone).toBe(tone);
  });

  it("unknown: the title names each proxy that did not report and why, one cause once", () => {
    const b = badgeOf(
      report({
        report: body({
          broken: null,
          verdict: "unknown",
          proxies: [
            proxy(1, { reported: false, reason: "its agent or tide-redirect does not report flows" }),
            proxy(2),
            proxy(3, { reported: false, reason: "no counters reading after the window" }),
            proxy(4, { reported: false, reason: "its agent or tide-redirect does not report flows" }),
          ],
        }),
      }),
    );
    expect(b.title).toBe(
      "Not known: proxy-www-01, proxy-www-04: its agent or tide-redirect does not report flows; " +
        "proxy-www-03: no counters reading after the window",
    );
  });
});

describe("change report headline", () => {
  it.each([
    ["none broken", report(), "0 connections broken", "none_broken"],
    [
      "one broken",
      report({ report: body({ broken: 1, verdict: "broken", flows: { ...zero, lastResort: 1 } }) }),
      "1 connection broken",
      "broken",
    ],
    [
      "many broken, thousands separated",
      report({ report: body({ broken: 1234, verdict: "broken", flows: { ...zero, lastResort: 1234 } }) }),
      "1,234 connections broken",
      "broken",
    ],
    [
      "capped: at least",
      report({
        report: body({ broken: 5, atLeast: true, verdict: "broken", flows: { ...zero, lastResort: 5 } }),
      }),
      "at least 5 connections broken",
      "broken",
    ],
    [
      "unknown, with reasons",
      report({
        report: body({
          broken: null,
          verdict: "unknown",
          proxies: [proxy(1, { reported: false, reason: "no flows reading after the window (last x)" })],
        }),
      }),
      "Not known: proxy-www-01: no flows reading after the window (last x)",
      "unknown",
    ],
    [
      "measuring",
      report({ status: "measuring", closedAt: null, report: null }),
      "Measuring since 09:51:02 UTC",
      "measuring",
    ],
    [
      "closing",
      report({ status: "closing", report: null }),
      "Window ended at 09:51:26 UTC; waiting for the proxies' readings to cover it",
      "closing",
    ],
  ] as const)("%s", (_, r, text, verdict) => {
    expect(headlineOf(r)).toEqual({ text, verdict });
  });

  it("unknown with every proxy reported: a capped reading, so 0 is not certain", () => {
    expect(unknownReasons(body({ broken: null, verdict: "unknown", atLeast: true }))).toEqual([
      "a proxy's flow readings were capped during the window, so 0 is not certain",
    ]);
  });
});

describe("predicted beside measured", () => {
  it("no prediction: nothing", () => {
    expect(predictedLines(report())).toEqual([]);
  });
  it("exact prediction, measured", () => {
    const r = report({
      predicted: impact(3, 20),
      report: body({
        broken: 3,
        verdict: "broken",
        flows: { secondChance: 18, alternateHash: 0, lastResort: 3 },
      }),
    });
    expect(predictedLines(r)).toEqual([
      "predicted 3 broken, measured 3",
      "predicted 20 by second chance, measured 18",
    ]);
  });
  it("an estimate is marked ~; a capped reading says at least", () => {
    const r = report({
      predicted: impact(0, 120, false),
      report: body({
        atLeast: true,
        broken: null,
        verdict: "unknown",
        flows: { ...zero, secondChance: 118 },
      }),
    });
    expect(predictedLines(r)).toEqual([
      "predicted 0 broken, measured: not known",
      "predicted ~120 by second chance, measured at least 118",
    ]);
  });
  it("unknown prediction; not measured yet while the window is open", () => {
    const r = report({ status: "measuring", closedAt: null, report: null, predicted: impact(null, null) });
    expect(predictedLines(r)).toEqual([
      "predicted unknown broken, not measured yet",
      "predicted unknown by second chance, not measured yet",
    ]);
  });
});

describe("report lines", () => {
  it("window: start → end in UTC, with why it ended", () => {
    expect(windowLine(body())).toBe(
      "2026-11-28 09:51:02 → 09:51:26 UTC (served by 2/2 directors, then 20 s)",
    );
    expect(windowLine(body({ windowEnd: "2026-11-29T00:00:10.000Z", ended: "v9 replaced it" }))).toBe(
      "2026-11-28 09:51:02 → 2026-11-29 00:00:10 UTC (v9 replaced it)",
    );
  });
  it("directors: served at, or not served", () => {
    const d = { directorId: "dir_1", hostname: "director-01.dc1.example.net" };
    expect(directorLine({ ...d, servedAt: "2026-11-28T09:51:04.000Z" })).toBe(
      "director-01: served at 09:51:04",
    );
    expect(directorLine({ ...d, servedAt: null })).toBe("director-01: not served");
  });
  it("flows: client → VIP on proxy; IPv6 in brackets", () => {
    const f = {
      hostname: "proxy-www-02.dc1.example.net",
      clientAddress: "198.51.100.7",
      clientPort: 45678,
      address: "192.0.2.10",
      port: 443,
      packets: 12,
      lastAt: "2026-11-28T09:51:10.000Z",
    };
    expect(flowLine(f)).toBe("198.51.100.7:45678 → 192.0.2.10:443 on proxy-www-02");
    expect(endpoint("2001:db8::7", 443)).toBe("[2001:db8::7]:443");
  });
  it("counts per kind, at least when capped", () => {
    const b = body({ flows: { secondChance: 1200, alternateHash: 3, lastResort: 0 } });
    expect(flowCount(b, "secondChance")).toBe("1,200");
    expect(flowCount({ ...b, atLeast: true }, "alternateHash")).toBe("at least 3");
    expect(perKindLine(b.flows)).toBe("second chance 1,200 · alternate hash 3 · last resort (broken) 0");
  });
});
