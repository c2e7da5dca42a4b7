import { describe, expect, it } from "vitest";
import { columnsOfRollupRows, columnsOfRollups } from "./observation-rollup-columns";
import { encodeRollup, packRollups, unpackRollups, type MinuteRollup } from "./observation-rollup";

const T = Date.parse("2026-11-27T02:00:00.000Z");
const rollup = (m: number): MinuteRollup => ({
  v: 1,
  samples: 60,
  spanS: 59 - (m % 2),
  rates: {
    "ns/1/TcpExtListenDrops": [m, m + 1, m + 0.5, m, 59 * m],
    ...(m % 3 === 0 ? { "ns/2/IpFragFails": [1, 2, 1.5, 2, 90] as MinuteRollup["rates"][string] } : {}),
    "cpu/0/netRxSoftirqs": [5, 6, 5.5, 6, 330],
  },
  gauges: { "ns/7/establishedTotal": [1, 2, 1.5, 2] },
  histograms: {},
});

describe("columnsOfRollups", () => {
  it("keeps the wanted rate series as columns aligned with the minutes, and every name seen", () => {
    const points = [4, 0, 3].map((m) => ({ minute: new Date(T + m * 60_000), rollup: rollup(m) }));
    const c = columnsOfRollups(points, (n) => n.startsWith("ns/"));
    expect(c.minutes).toEqual([0, 3, 4].map((m) => T + m * 60_000));
    expect(c.spanS).toEqual([59, 58, 59]);
    expect(Object.keys(c.rates).sort()).toEqual(["ns/1/TcpExtListenDrops", "ns/2/IpFragFails"]);
    expect(c.rates["ns/2/IpFragFails"]).toEqual([[1, 2, 1.5, 2, 90], [1, 2, 1.5, 2, 90], null]);
    expect([...c.names].sort()).toEqual([
      "cpu/0/netRxSoftirqs",
      "ns/1/TcpExtListenDrops",
      "ns/2/IpFragFails",
      "ns/7/establishedTotal",
    ]);
  });

  it("reads what packRollups packed as unpackRollups does", () => {
    // The packed-hour reader in rollupColumnsOfRange reads packRollups' columns directly; this pins
    // the layout it relies on (r: name -> [mins, maxs, avgs, lasts, increases] aligned with m).
    const points = Array.from({ length: 60 }, (_, m) => ({
      minute: new Date(T + m * 60_000),
      rollup: rollup(m),
    }));
    const unpacked = unpackRollups(new Date(T), packRollups(new Date(T), points));
    const fromUnpacked = columnsOfRollups(unpacked, () => true);
    const direct = columnsOfRollups(points, () => true);
    expect(fromUnpacked).toEqual(direct);
  });

  it("reads packed hours and minute rows of a range as the minutes' own columns", () => {
    // Hour 0 packed (60 minutes), then minutes 60..64 one a row, minute 62 missing.
    const points = Array.from({ length: 65 }, (_, m) => ({
      minute: new Date(T + m * 60_000),
      rollup: rollup(m),
    })).filter((p) => p.minute.getTime() !== T + 62 * 60_000);
    const rows = [
      { minute: new Date(T), span_minutes: 60, data: packRollups(new Date(T), points.slice(0, 60)) },
      ...points.slice(60).map((p) => ({ minute: p.minute, span_minutes: 1, data: encodeRollup(p.rollup) })),
    ];
    const wanted = (n: string) => n.startsWith("ns/");
    // [00:50:30, 01:03:00]: from's minute (00:50) on, to inclusive.
    const from = new Date(T + 50 * 60_000 + 30_000);
    const to = new Date(T + 63 * 60_000);
    const inRange = points.filter((p) => p.minute.getTime() >= T + 50 * 60_000 && p.minute <= to);
    expect(columnsOfRollupRows(rows, from, to, wanted)).toEqual(columnsOfRollups(inRange, wanted));
    expect(columnsOfRollupRows(rows, from, to, wanted).minutes).toHaveLength(13);
    // A range inside the packed hour only.
    const inner = columnsOfRollupRows(rows, new Date(T + 10 * 60_000), new Date(T + 11 * 60_000), wanted);
    expect(inner.minutes).toEqual([T + 10 * 60_000, T + 11 * 60_000]);
  });
});
