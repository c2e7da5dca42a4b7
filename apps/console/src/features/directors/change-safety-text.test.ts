import type { UnassignPreview } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { reasonNeeded, reasonOffered, removalText, unassignText } from "./change-safety-text";

const preview = (over: Partial<UnassignPreview>): UnassignPreview => ({
  directorId: "director_aaaa",
  poolId: "pool_aaaa",
  poolName: "lab",
  last: true,
  stillServedBy: [],
  breaks: false,
  broken: 0,
  proxies: [],
  endpoints: [],
  unknown: [],
  message: "the API's message",
  ...over,
});

describe("unassignText", () => {
  it.each([
    [
      "another director serves it",
      { last: false, stillServedBy: [{ id: "director_bbbb", hostname: "lab-director-2" }] },
      "Nothing breaks: lab-director-2 still serves lab.",
    ],
    [
      "two others serve it",
      {
        last: false,
        stillServedBy: [
          { id: "director_bbbb", hostname: "d2" },
          { id: "director_cccc", hostname: "d3" },
        ],
      },
      "Nothing breaks: d2, d3 still serve lab.",
    ],
    [
      "the last, with connections",
      { breaks: true, broken: 12 },
      "Nothing else serves lab: 12 established connections break.",
    ],
    [
      "the last, one connection",
      { breaks: true, broken: 1 },
      "Nothing else serves lab: 1 established connection breaks.",
    ],
    [
      "the last, some proxies unknown",
      {
        breaks: true,
        broken: 3,
        unknown: [{ proxyId: "proxy_aaaa", hostname: "p2", reason: "no report for 9 s" }],
      },
      "Nothing else serves lab: at least 3 established connections break.",
    ],
    [
      "the last, unknown",
      { breaks: null, unknown: [{ proxyId: "proxy_aaaa", hostname: "p2", reason: "no report for 9 s" }] },
      "Nothing else serves lab: its connections break, how many is unknown (p2: no report for 9 s).",
    ],
    ["the last, none reported", { breaks: false }, "the API's message"],
  ])("%s", (_, over, text) => {
    expect(unassignText(preview(over))).toBe(text);
  });
});

describe("reasonNeeded and removalText", () => {
  it("requires a reason for a known break, offers one for an unknown count", () => {
    expect([undefined, { breaks: false }, { breaks: null }, { breaks: true }].map(reasonNeeded)).toEqual([
      false,
      false,
      false,
      true,
    ]);
    expect([undefined, { breaks: false }, { breaks: null }, { breaks: true }].map(reasonOffered)).toEqual([
      false,
      false,
      true,
      true,
    ]);
  });

  it("says each pool of a removal", () => {
    const r = {
      directorId: "director_aaaa",
      hostname: "d1",
      breaks: true,
      broken: 12,
      message: "m",
      pools: [
        preview({ breaks: true, broken: 12 }),
        preview({ poolName: "web", last: false, stillServedBy: [{ id: "director_bbbb", hostname: "d2" }] }),
      ],
    };
    expect(removalText(r)).toBe(
      "Nothing else serves lab: 12 established connections break. Nothing breaks: d2 still serves web.",
    );
    expect(removalText({ ...r, pools: [], message: "d1 serves no pool: nothing breaks." })).toBe(
      "d1 serves no pool: nothing breaks.",
    );
  });
});
