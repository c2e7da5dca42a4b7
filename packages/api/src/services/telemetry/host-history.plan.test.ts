import { TideError, type NetnsRef } from "@tide/contracts";
import { columnsOfRollups, type GaugeStat } from "@tide/db";
import { describe, expect, it } from "vitest";
import {
  historyGrid,
  historyLabel,
  historyTier,
  planHistoryWindow,
  seriesOfRollups,
  chartedRateSeries,
  concatColumns,
  seriesOfSamples,
  unrolledMinutes,
  type HistorySample,
} from "./host-history.plan";

const NOW = Date.parse("2026-11-27T04:00:00.000Z");
const LIMITS = { rollupRetentionMs: 30 * 86_400_000 };
const ROOT: NetnsRef = { inode: 4026531840, name: null, root: true };
const WEB: NetnsRef = { inode: 4026532511, name: "web", root: false };

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(TideError);
    expect((e as TideError).code).toBe("bad_request");
    return (e as Error).message;
  }
  throw new Error("not refused");
}

describe("planHistoryWindow", () => {
  it("reads named ranges back from now and from/to as given", () => {
    expect(planHistoryWindow({ range: "15m" }, NOW, LIMITS)).toEqual({
      from: NOW - 900_000,
      to: NOW,
      range: "15m",
    });
    expect(planHistoryWindow({ range: "7d" }, NOW, LIMITS).from).toBe(NOW - 7 * 86_400_000);
    expect(
      planHistoryWindow({ from: "2026-11-27T01:00:00Z", to: "2026-11-27T02:30:00.000Z" }, NOW, LIMITS),
    ).toEqual({
      from: Date.parse("2026-11-27T01:00:00Z"),
      to: Date.parse("2026-11-27T02:30:00Z"),
      range: null,
    });
  });

  it.each([
    [{}, "Give range (15m, 1h, 24h, 7d) or both from and to."],
    [{ from: "2026-11-27T01:00:00Z" }, "Give range (15m, 1h, 24h, 7d) or both from and to."],
    [{ range: "1h", from: "2026-11-27T01:00:00Z" }, "Give either range or from and to, not both."],
    [{ range: "2h" }, 'range "2h" is not one of 15m, 1h, 24h, 7d.'],
    [{ range: "toString" }, 'range "toString" is not one of 15m, 1h, 24h, 7d.'],
    [
      { from: "yesterday", to: "2026-11-27T01:00:00Z" },
      'from "yesterday" is not an ISO 8601 time (e.g. 2026-11-27T03:00:00Z).',
    ],
    [
      { from: "2026-11-27T01:00:00Z", to: "2026-13-45T99:00:00Z" },
      'to "2026-13-45T99:00:00Z" is not a valid time.',
    ],
    [{ from: "2026-11-27T02:00:00Z", to: "2026-11-27T02:00:00Z" }, "from must be before to."],
    [{ from: "2026-11-27T03:00:00Z", to: "2026-11-27T02:00:00Z" }, "from must be before to."],
    [
      { from: "2026-10-01T00:00:00Z", to: "2026-11-27T02:00:00Z" },
      "The range is longer than the 30 days of history kept.",
    ],
    [
      { from: "2026-10-20T00:00:00Z", to: "2026-10-21T00:00:00Z" },
      "from is older than the 30 days of history kept.",
    ],
  ])("refuses %j with a plain message", (input, message) => {
    expect(refusal(() => planHistoryWindow(input, NOW, LIMITS))).toBe(message);
  });

  it("refuses a week when only a day of rollups is kept", () => {
    expect(refusal(() => planHistoryWindow({ range: "7d" }, NOW, { rollupRetentionMs: 86_400_000 }))).toBe(
      "The range is longer than the 1 days of history kept.",
    );
  });
});

describe("historyTier", () => {
  const retention = 60 * 60_000;
  it.each([
    ["15 min back", NOW - 900_000, NOW, "samples"],
    ["the whole hour retained", NOW - 3_600_000, NOW, "samples"],
    ["a second past the retention", NOW - 3_601_000, NOW, "rollups"],
    ["a day", NOW - 86_400_000, NOW, "rollups"],
    ["ten minutes two hours ago", NOW - 7_200_000, NOW - 6_600_000, "rollups"],
  ])("%s -> %s", (_name, from, to, tier) => {
    expect(historyTier({ from, to }, NOW, retention)).toBe(tier);
  });
  it("uses rollups for more than an hour even when the samples are kept longer", () => {
    expect(historyTier({ from: NOW - 7_200_000, to: NOW }, NOW, 10 * 3_600_000)).toBe("rollups");
  });
});

describe("historyGrid", () => {
  it.each([
    ["15 min of samples at 1 s", 900_000, "samples", 1, 901],
    ["1 h of samples in 3 s buckets", 3_600_000, "samples", 3, 1_201],
    ["24 h of rollups at 1 min", 86_400_000, "rollups", 60, 1_441],
    ["7 d of rollups in 10 min buckets", 7 * 86_400_000, "rollups", 600, 1_009],
  ] as const)("%s", (_name, span, tier, stepS, points) => {
    const grid = historyGrid({ from: NOW - span, to: NOW }, tier);
    expect(grid).toEqual({ start: NOW - span, stepS, points });
    expect(grid.points).toBeLessThanOrEqual(1_500 + 1);
  });
  it("aligns the first bucket to the step, so a rollup minute never straddles two buckets", () => {
    const from = Date.parse("2026-11-20T04:07:30Z");
    const grid = historyGrid({ from, to: from + 7 * 86_400_000 }, "rollups");
    expect(new Date(grid.start).toISOString()).toBe("2026-11-20T04:00:00.000Z");
    expect(grid.start + (grid.points - 1) * 600_000).toBeLessThanOrEqual(from + 7 * 86_400_000);
    expect(grid.start + grid.points * 600_000).toBeGreaterThan(from + 7 * 86_400_000);
  });
});

/** A sample at `s` seconds after T with the given counters in root (and web when `web` is given). */
const T = Date.parse("2026-11-27T03:00:00.000Z");
function sampleAt(s: number, counters: Record<string, number>, web?: Record<string, number>): HistorySample {
  const ns = (netns: typeof ROOT, c: Record<string, number>) =>
    ({ netns, counters: c }) as HistorySample["obs"]["namespaces"][number];
  return { at: T + s * 1000, obs: { namespaces: [ns(ROOT, counters), ...(web ? [ns(WEB, web)] : [])] } };
}

describe("seriesOfSamples", () => {
  const grid = { start: T, stepS: 1, points: 8 };

  it("gives each sample's rate since the previous in its second; missing seconds and resets are gaps", () => {
    // Drops: +10/s, then a missing sample at 3 s (the rate at 4 s spans two seconds), a reset at 6 s.
    const samples = [
      sampleAt(-1, { TcpExtListenDrops: 90 }),
      sampleAt(0, { TcpExtListenDrops: 100 }),
      sampleAt(1, { TcpExtListenDrops: 110 }),
      sampleAt(2, { TcpExtListenDrops: 120 }),
      sampleAt(4, { TcpExtListenDrops: 150 }),
      sampleAt(5, { TcpExtListenDrops: 151 }),
      sampleAt(6, { TcpExtListenDrops: 3 }),
      sampleAt(7, { TcpExtListenDrops: 8 }),
    ];
    const [root] = seriesOfSamples(samples, grid, ["TcpExtListenDrops", "IpFragFails"]);
    expect(root!.key).toBe("root");
    const drops = root!.series[0]!;
    expect(drops.avg).toEqual([10, 10, 10, null, 15, 1, null, 5]);
    expect(drops.min).toEqual(drops.avg);
    expect(drops.max).toEqual(drops.avg);
    // A counter the host does not report has no rate anywhere: all gaps, not zeros.
    expect(root!.series[1]!.avg).toEqual(new Array(8).fill(null));
  });

  it("keeps the sample order it is given no matter how it comes, and namespaces apart", () => {
    const samples = [0, 1, 2, 3].map((s) =>
      sampleAt(s, { TcpExtListenDrops: 5 * s }, { TcpExtListenDrops: 7 * s }),
    );
    const out = seriesOfSamples([...samples].reverse(), { start: T, stepS: 1, points: 4 }, [
      "TcpExtListenDrops",
    ]);
    expect(out.map((n) => n.key)).toEqual(["root", "name:web"]);
    expect(out[0]!.series[0]!.avg).toEqual([null, 5, 5, 5]);
    expect(out[1]!.series[0]!.avg).toEqual([null, 7, 7, 7]);
  });

  it("puts several seconds in one bucket: min, max, time-weighted average and last", () => {
    const values = [0, 10, 30, 30, 70, 80];
    const samples = values.map((v, s) => sampleAt(s, { TcpExtListenDrops: v }));
    const [root] = seriesOfSamples(samples, { start: T, stepS: 3, points: 2 }, ["TcpExtListenDrops"]);
    const drops = root!.series[0]!;
    // Bucket 0 holds the rates at 1 s (10) and 2 s (20); bucket 1 those at 3, 4, 5 s (0, 40, 10).
    expect(drops.min).toEqual([10, 0]);
    expect(drops.max).toEqual([20, 40]);
    expect(drops.avg).toEqual([15, 50 / 3]);
    expect(drops.last).toEqual([20, 10]);
  });
});

function rollup(minute: number, rates: Record<string, [number, number, number, number, number]>, spanS = 59) {
  return {
    minute: new Date(T + minute * 60_000),
    rollup: { spanS, rates, gauges: { [`ns/${ROOT.inode}/establishedTotal`]: [1, 1, 1, 1] as GaugeStat } },
  };
}
/** Rollups as the service hands them over: columns of the charted series (packages/db). */
const cols = (rollups: ReturnType<typeof rollup>[]) =>
  columnsOfRollups(rollups, chartedRateSeries(["TcpExtListenDrops", "IpFragFails"]));

describe("seriesOfRollups", () => {
  const key = `ns/${ROOT.inode}/TcpExtListenDrops`;
  const known = new Map<number, NetnsRef>([[ROOT.inode, ROOT]]);

  it("gives each minute's min/avg/max/last; absent series are 0, missing minutes gaps", () => {
    const rollups = [
      rollup(0, { [key]: [1, 9, 4.5, 2, 265] }),
      rollup(1, {}),
      rollup(3, { [key]: [0, 3, 1, 3, 59] }),
    ];
    const [root] = seriesOfRollups(
      cols(rollups),
      { start: T, stepS: 60, points: 5 },
      ["TcpExtListenDrops"],
      known,
    );
    expect(root).toMatchObject({ key: "root", netns: ROOT });
    const drops = root!.series[0]!;
    expect(drops.min).toEqual([1, 0, null, 0, null]);
    expect(drops.max).toEqual([9, 0, null, 3, null]);
    expect(drops.avg).toEqual([4.5, 0, null, 1, null]);
    expect(drops.last).toEqual([2, 0, null, 3, null]);
  });

  it("merges minutes into wider buckets, the average weighted by the seconds each covered", () => {
    const rollups = [
      rollup(0, { [key]: [2, 8, 4, 8, 236] }, 59),
      rollup(1, { [key]: [10, 30, 20, 10, 20] }, 1),
      rollup(4, {}),
    ];
    const [root] = seriesOfRollups(
      cols(rollups),
      { start: T, stepS: 300, points: 1 },
      ["TcpExtListenDrops"],
      known,
    );
    const drops = root!.series[0]!;
    expect(drops.min).toEqual([0]);
    expect(drops.max).toEqual([30]);
    // To the rollups' 4 significant digits: (4 * 59 + 20 * 1 + 0 * 59) / 119 = 2.1512...
    expect(drops.avg).toEqual([2.151]);
    expect(drops.last).toEqual([0]);
  });

  it("names namespaces from the newest sample, else by inode, root first", () => {
    const rollups = [
      rollup(0, {
        [`ns/${WEB.inode}/TcpExtListenDrops`]: [1, 1, 1, 1, 60],
        "ns/77/IpFragFails": [1, 1, 1, 1, 60],
      }),
    ];
    const out = seriesOfRollups(
      cols(rollups),
      { start: T, stepS: 60, points: 1 },
      ["TcpExtListenDrops"],
      new Map<number, NetnsRef>([
        [ROOT.inode, ROOT],
        [WEB.inode, WEB],
      ]),
    );
    expect(out.map((n) => n.key)).toEqual(["root", "inode:77", "name:web"]);
  });

  it("puts the minutes rolled up on the fly after the stored ones", () => {
    const stored = cols([rollup(0, { [key]: [1, 1, 1, 1, 59] })]);
    const fresh = cols([rollup(2, { [key]: [3, 3, 3, 3, 177], "ns/77/IpFragFails": [1, 1, 1, 1, 59] })]);
    const both = concatColumns(stored, fresh);
    expect(both.minutes).toEqual([T, T + 120_000]);
    expect(both.rates["ns/77/IpFragFails"]).toEqual([null, [1, 1, 1, 1, 59]]);
    const out = seriesOfRollups(both, { start: T, stepS: 60, points: 3 }, ["TcpExtListenDrops"], known);
    expect(out.find((n) => n.key === "root")!.series[0]!.avg).toEqual([1, null, 3]);
    // Namespace 77 is new in the fresh minute: 0 in the stored minute that has a rollup.
    expect(out.find((n) => n.key === "inode:77")!.series[0]!.avg).toEqual([0, null, 0]);
  });

  it("picks the charted counters of every namespace, nothing else", () => {
    const wanted = chartedRateSeries(["TcpExtListenDrops"]);
    expect(
      [
        "ns/1/TcpExtListenDrops",
        "ns/1/TcpExtListenDropsX",
        "cpu/0/TcpExtListenDrops",
        "ns/1/sockstat/tcpInuse",
      ].filter(wanted),
    ).toEqual(["ns/1/TcpExtListenDrops"]);
  });

  it("is empty without rollups", () => {
    expect(
      seriesOfRollups(cols([]), { start: T, stepS: 60, points: 3 }, ["TcpExtListenDrops"], known),
    ).toEqual([]);
  });
});

describe("historyLabel", () => {
  it.each([
    ["samples", 1, "1 s samples"],
    ["samples", 3, "1 s samples, 3 s buckets"],
    ["rollups", 60, "1 min rollups"],
    ["rollups", 600, "1 min rollups, 10 min buckets"],
    ["rollups", 3_600, "1 min rollups, 1 h buckets"],
  ] as const)("%s at %i s: %s", (tier, stepS, label) => {
    expect(historyLabel(tier, stepS)).toBe(label);
  });
});

describe("unrolledMinutes", () => {
  it("groups the samples of minutes not rolled up yet by minute start", () => {
    const s = (iso: string) => ({ sampledAt: new Date(iso) });
    const samples = [
      s("2026-11-27T03:58:59.990Z"),
      s("2026-11-27T03:59:00.004Z"),
      s("2026-11-27T03:59:59.999Z"),
      s("2026-11-27T04:00:01.000Z"),
    ];
    const out = unrolledMinutes(samples, new Set([Date.parse("2026-11-27T03:58:00Z")]));
    expect([...out.keys()].map((m) => new Date(m).toISOString())).toEqual([
      "2026-11-27T03:59:00.000Z",
      "2026-11-27T04:00:00.000Z",
    ]);
    expect(out.get(Date.parse("2026-11-27T03:59:00Z"))).toEqual([samples[1], samples[2]]);
  });
});
