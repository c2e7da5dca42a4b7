import { describe, expect, it } from "vitest";
import { goldenJson } from "./__fixtures__/testdata";
import { buildTable } from "./build";
import { diffTables } from "./diff";
import { parseGlbConfigJson } from "./glb-json";
import { TABLE_ROWS, type ForwardingTable } from "./types";

const [drainSpec] = parseGlbConfigJson(goldenJson("golden-drain"));
const allActive = {
  ...drainSpec!,
  backends: drainSpec!.backends.map((b) => ({ ...b, state: "active" as const })),
};

describe("diffTables", () => {
  const before = buildTable(allActive);
  const after = buildTable(drainSpec!);
  const d = diffTables(before, after);
  const drainingIdx = 3;

  it("finds exactly the rows where the draining proxy was primary", () => {
    const expected: number[] = [];
    for (let r = 0; r < TABLE_ROWS; r++) if (before.primary[r] === drainingIdx) expected.push(r);
    expect(d.primaryChanged.count).toBe(expected.length);
    expect(Array.from(d.primaryChanged.rows)).toEqual(expected);
    // Those rows swap, so their secondary changes too, and no other row does.
    expect(Array.from(d.secondaryChanged.rows)).toEqual(expected);
  });

  it("reports shares before and after by address", () => {
    const p = d.proxies.find((x) => x.address === "10.20.0.13")!;
    expect(p.before!.primary).toBe(d.primaryChanged.count);
    expect(p.after!.primary).toBe(0);
    expect(p.after!.secondary).toBe(p.before!.secondary + p.before!.primary);
    expect(p.after!.primaryFraction).toBe(0);
    const sum = d.proxies.reduce((s, x) => s + x.after!.primary, 0);
    expect(sum).toBe(TABLE_ROWS);
  });

  it("matches backends by address, not slot index", () => {
    // Same table with backend slots reversed: nothing changes for traffic.
    const n = before.backends.length;
    const reversed: ForwardingTable = {
      ...before,
      backends: [...before.backends].reverse(),
      primary: before.primary.map((p) => n - 1 - p),
      secondary: before.secondary.map((s) => n - 1 - s),
    };
    const same = diffTables(before, reversed);
    expect(same.primaryChanged.count).toBe(0);
    expect(same.secondaryChanged.count).toBe(0);
  });

  it("lists proxies present in only one table with null shares", () => {
    const fewer = buildTable({ ...allActive, backends: allActive.backends.slice(1) });
    const r = diffTables(before, fewer);
    const gone = r.proxies.find((x) => x.address === "10.20.0.10")!;
    expect(gone.after).toBeNull();
    expect(gone.before!.primary).toBeGreaterThan(0);
    // Rendezvous: only rows that had the removed proxy as primary change primary.
    expect(r.primaryChanged.count).toBe(gone.before!.primary);
  });
});
