import type { ConnectionImpact, TableDiff } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { impactLines, previewSummary, reasonRequired, staleReason } from "./preview-summary";

type Share = TableDiff["shares"][number];
const share = (i: number, before: [number, number], after: [number, number]): Share => ({
  address: `10.0.0.${i}`,
  hostname: `proxy-www-0${i}.dc1.example.net`,
  before: { primary: before[0], secondary: before[1] },
  after: { primary: after[0], secondary: after[1] },
});

function diff(shares: Share[], rows: { primary: number; secondary: number; changed: number }): TableDiff {
  return {
    rowsPrimaryChanged: rows.primary,
    rowsSecondaryChanged: rows.secondary,
    rowsChanged: rows.changed,
    sample: [],
    shares,
    hashKeyChanged: false,
    hashFields: { before: ["src_addr"], after: ["src_addr"], changed: false },
    flowsMoved: null,
    binds: { added: [], removed: [] },
    statusChanges: [],
  };
}

/** Eight proxies of 8,192 rows each; proxy 3 is the one acted on. */
const eight = (three: { before: [number, number]; after: [number, number] }, othersAfter: number) =>
  [1, 2, 3, 4, 5, 6, 7, 8].map((i) =>
    i === 3 ? share(3, three.before, three.after) : share(i, [8192, 8192], [othersAfter, 8192]),
  );
const target = { hostname: "proxy-www-03.dc1.example.net", address: "10.0.0.3" };

describe("preview summary line", () => {
  it("drain: new flows go to the other seven, established ones still reach it as secondary", () => {
    const d = diff(eight({ before: [8192, 8192], after: [0, 16384] }, 9362), {
      primary: 8192,
      secondary: 8192,
      changed: 8192,
    });
    expect(previewSummary({ ...target, from: "active", to: "draining", diff: d })).toBe(
      "New flows go to the other 7; established flows still reach proxy-www-03 as secondary.",
    );
  });

  it("deactivate: its remaining connections break, new flows do not move", () => {
    const d = diff(eight({ before: [0, 16384], after: [0, 0] }, 9362), {
      primary: 0,
      secondary: 16384,
      changed: 16384,
    });
    expect(previewSummary({ ...target, from: "draining", to: "inactive", diff: d })).toBe(
      "proxy-www-03 leaves the table: connections still on it break; new flows are not affected (16,384 rows get another secondary).",
    );
  });

  it("abort drain and abort fill name the rows the proxy leads", () => {
    const back = diff(eight({ before: [0, 16384], after: [8192, 8192] }, 8192), {
      primary: 8192,
      secondary: 8192,
      changed: 8192,
    });
    expect(previewSummary({ ...target, from: "draining", to: "active", diff: back })).toBe(
      "proxy-www-03 takes new flows again on its 8,192 rows; flows that began during the drain still reach their proxy as secondary.",
    );
    const unfill = diff(eight({ before: [8192, 8192], after: [0, 0] }, 9362), {
      primary: 8192,
      secondary: 16384,
      changed: 16384,
    });
    expect(previewSummary({ ...target, from: "filling", to: "inactive", diff: unfill })).toBe(
      "proxy-www-03 leaves the table: new flows on its 8,192 rows go back to the other 7 proxies; connections it took while filling break.",
    );
  });

  it("says so when no row changes, and falls back to the two figures otherwise", () => {
    const none = diff(eight({ before: [8192, 8192], after: [8192, 8192] }, 8192), {
      primary: 0,
      secondary: 0,
      changed: 0,
    });
    expect(previewSummary({ ...target, from: "filling", to: "active", diff: none })).toBe(
      "No row changes: proxy-www-03 becomes active and every flow stays where it is.",
    );
    const some = diff(eight({ before: [8192, 8192], after: [8192, 9000] }, 8192), {
      primary: 10,
      secondary: 800,
      changed: 805,
    });
    expect(previewSummary({ ...target, from: "filling", to: "active", diff: some })).toBe(
      "10 rows change primary (new flows move), 795 only their secondary.",
    );
  });
});

describe("stale preview", () => {
  it("is fresh while the pool is at the version it was computed against", () => {
    expect(staleReason(7, 7)).toBeNull();
    expect(staleReason(null, null)).toBeNull();
  });
  it("says which version it was computed against and which is current", () => {
    expect(staleReason(7, 8)).toBe(
      "The pool changed since this preview (it was computed against v7; the current version is v8).",
    );
    expect(staleReason(null, 1)).toContain("computed against no table version; the current version is v1");
  });
});

const figure = (count: number | null, exact = count !== null) => ({ count, exact });
function impact(over: Partial<ConnectionImpact>): ConnectionImpact {
  return {
    kept: figure(300),
    viaSecondChance: figure(0),
    broken: figure(0),
    proxies: [],
    unknown: [],
    estimate: null,
    ...over,
  };
}
const row = (hostname: string, established: number | null, broken: number | null) => ({
  proxyId: `prx_${hostname}`,
  hostname,
  established,
  kept: 0,
  viaSecondChance: 0,
  broken,
});

describe("reason", () => {
  it("is required on drain and deactivate only", () => {
    expect(
      (["drain", "deactivate", "fill", "activate", "abort"] as const).filter((a) => reasonRequired(a)),
    ).toEqual(["drain", "deactivate"]);
  });
  it("is required on any change predicted to break connections, or whose breakage is unknown", () => {
    expect(reasonRequired("abort", impact({ broken: figure(3) }))).toBe(true);
    expect(reasonRequired("abort", impact({ broken: figure(null) }))).toBe(true);
    expect(reasonRequired("abort", impact({ broken: figure(0) }))).toBe(false);
  });
});

describe("connection impact", () => {
  it("drain: nothing breaks, the draining proxy's connections reach it by second chance", () => {
    const lines = impactLines(impact({ viaSecondChance: figure(37) }));
    expect(lines.summary).toBe("0 connections break; 37 reach their proxy by second chance.");
    expect(lines.breaks).toBeNull();
    expect(lines.unknown).toBeNull();
  });
  it("fill: an estimate is marked ~ and says how it was made", () => {
    const lines = impactLines(
      impact({ viaSecondChance: figure(120, false), estimate: "proportional to rows moved" }),
    );
    expect(lines.summary).toBe("0 connections break; ~120 reach their proxy by second chance.");
    expect(lines.estimate).toBe("~ estimated, proportional to rows moved.");
  });
  it("deactivate with connections left: the exact count, on the proxy that has them", () => {
    const lines = impactLines(
      impact({ broken: figure(37), proxies: [row("proxy-www-03.dc1.example.net", 37, 37)] }),
    );
    expect(lines.summary).toBe("37 connections break; 0 reach their proxy by second chance.");
    expect(lines.breaks).toEqual({
      count: 37,
      text: "37 established connections on proxy-www-03 break: they have no hop left once it leaves the table.",
    });
  });
  it("an unknown count is said to be unknown, with why, never 0", () => {
    const lines = impactLines(
      impact({
        broken: figure(null),
        unknown: [{ proxyId: "prx_3", hostname: "proxy-x.dc1", reason: "no report for 12 s" }],
      }),
    );
    expect(lines.summary).toBe(
      "How many connections break is unknown; 0 reach their proxy by second chance.",
    );
    expect(lines.breaks).toBeNull();
    expect(lines.unknown).toBe(
      "Unknown for proxy-x (no report for 12 s): figures that depend on it are not counted as 0.",
    );
  });
});
