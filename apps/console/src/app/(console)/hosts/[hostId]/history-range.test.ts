import { describe, expect, it } from "vitest";
import {
  findingWindow,
  fromUtcInput,
  historyChoiceOf,
  historyQuery,
  hostHistoryHref,
  toUtcInput,
} from "./history-range";

const params = (q: string) => new URLSearchParams(q);

describe("history range in the URL", () => {
  it.each([
    ["", { mode: "live" }],
    ["range=24h", { mode: "range", range: "24h" }],
    ["range=2h", { mode: "live" }],
    ["from=2026-11-27T01:00:00.000Z", { mode: "live" }],
    [
      "from=2026-11-27T01:00:00.000Z&to=2026-11-27T02:00:00.000Z",
      { mode: "custom", from: "2026-11-27T01:00:00.000Z", to: "2026-11-27T02:00:00.000Z" },
    ],
  ])("%j -> %j and back", (q, choice) => {
    const c = historyChoiceOf(params(q));
    expect(c).toEqual(choice);
    if (c.mode !== "live") expect(historyChoiceOf(params(historyQuery(c)))).toEqual(c);
  });
  it("builds host links", () => {
    expect(hostHistoryHref("host_1", { mode: "live" })).toBe("/hosts/host_1");
    expect(hostHistoryHref("host_1", { mode: "range", range: "7d" })).toBe("/hosts/host_1?range=7d");
    expect(
      hostHistoryHref("host_1", {
        mode: "custom",
        from: "2026-11-27T01:00:00.000Z",
        to: "2026-11-27T02:00:00.000Z",
      }),
    ).toBe("/hosts/host_1?from=2026-11-27T01%3A00%3A00.000Z&to=2026-11-27T02%3A00%3A00.000Z");
  });
  it("reads datetime-local values as UTC", () => {
    expect(toUtcInput("2026-11-27T01:02:33.000Z")).toBe("2026-11-27T01:02");
    expect(fromUtcInput("2026-11-27T01:02")).toBe("2026-11-27T01:02:00.000Z");
    expect(fromUtcInput("")).toBeNull();
    expect(fromUtcInput("tomorrow")).toBeNull();
  });
});

describe("findingWindow", () => {
  const now = Date.parse("2026-11-27T04:00:00.500Z");
  it("is 15 min before first seen to now while open", () => {
    expect(findingWindow({ firstSeenAt: "2026-11-27T03:50:00.250Z", resolvedAt: null }, now, 30)).toEqual({
      mode: "custom",
      from: "2026-11-27T03:35:00.000Z",
      to: "2026-11-27T04:00:00.000Z",
    });
  });
  it("ends 15 min after it resolved, or now if that is sooner", () => {
    expect(
      findingWindow({ firstSeenAt: "2026-11-27T01:00:00Z", resolvedAt: "2026-11-27T02:00:00Z" }, now, 30)?.to,
    ).toBe("2026-11-27T02:15:00.000Z");
    expect(
      findingWindow({ firstSeenAt: "2026-11-27T03:00:00Z", resolvedAt: "2026-11-27T03:55:00Z" }, now, 30)?.to,
    ).toBe("2026-11-27T04:00:00.000Z");
  });
  it("starts no earlier than the history kept, less an hour; none when all of it is older", () => {
    // Open for 40 days, 30 kept: the last 30 days less an hour, to now.
    expect(findingWindow({ firstSeenAt: "2026-10-18T04:00:00Z", resolvedAt: null }, now, 30)).toEqual({
      mode: "custom",
      from: "2026-10-28T05:00:00.000Z",
      to: "2026-11-27T04:00:00.000Z",
    });
    // Resolved 2 days after it opened 31 days ago, 7 kept: gone.
    expect(
      findingWindow({ firstSeenAt: "2026-10-27T04:00:00Z", resolvedAt: "2026-10-29T04:00:00Z" }, now, 7),
    ).toBeNull();
    // Ended inside the kept history: from is cut, to is the end plus the margin.
    expect(
      findingWindow({ firstSeenAt: "2026-11-10T00:00:00Z", resolvedAt: "2026-11-21T00:00:00Z" }, now, 7),
    ).toEqual({ mode: "custom", from: "2026-11-20T05:00:00.000Z", to: "2026-11-21T00:15:00.000Z" });
  });
});
