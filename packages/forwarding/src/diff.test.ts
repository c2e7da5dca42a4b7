import { describe, expect, it } from "vitest";
import { goldenJson } from "./__fixtures__/testdata";
import { buildTable } from "./build";
import { bindLabel, diffTableFiles, diffTables, FLOW_SAMPLE_SIZE } from "./diff";
import { parseGlbConfigJson } from "./glb-json";
import { decodeGlbd, encodeGlbd } from "./glbd-codec";
import { TABLE_ROWS, type ForwardingTable, type HashField, type TableSpec } from "./types";

const [drainSpec] = parseGlbConfigJson(goldenJson("golden-drain"));
const allActive: TableSpec = {
  ...drainSpec!,
  backends: drainSpec!.backends.map((b) => ({ ...b, state: "active" as const })),
};
const otherKey = Uint8Array.from({ length: 16 }, (_, i) => 0xf0 ^ i);

/** A table that says which fields it hashes, as a GLBD v3 table does. */
function withFields(
  t: ForwardingTable,
  hashFields: HashField[],
  altHashFields: HashField[] = [],
): ForwardingTable {
  return { ...t, hashFields, altHashFields };
}

/** Probability that two independent rows have different primaries: 1 - sum of squared shares. */
function expectedMoveFraction(t: ForwardingTable): number {
  const counts = new Array<number>(t.backends.length).fill(0);
  for (let r = 0; r < TABLE_ROWS; r++) counts[t.primary[r]!]!++;
  return 1 - counts.reduce((s, c) => s + (c / TABLE_ROWS) ** 2, 0);
}

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
    expect(p.primaryRowsChanged).toBe(d.primaryChanged.count);
    const sum = d.proxies.reduce((s, x) => s + x.after!.primary, 0);
    expect(sum).toBe(TABLE_ROWS);
    // Every moved row counts once for the proxy it left and once for the one it went to.
    const moved = d.proxies.reduce((s, x) => s + x.primaryRowsChanged, 0);
    expect(moved).toBe(2 * d.primaryChanged.count);
  });

  it("reports the drain as a state change that moves rows, and nothing about keys or binds", () => {
    expect(d.statusChanges).toEqual([
      {
        address: "10.20.0.13",
        before: { state: "active", healthy: true },
        after: { state: "draining", healthy: true },
        primaryRowsChanged: d.primaryChanged.count,
      },
    ]);
    expect(d.hashKeyChanged).toBe(false);
    expect(d.hashFields.changed).toBe(false);
    expect(d.flowsMoved).toBeNull();
    expect(d.binds).toEqual({ added: [], removed: [] });
    expect(d.backends).toEqual({ added: [], removed: [] });
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
    expect(same.statusChanges).toEqual([]);
    expect(same.backends).toEqual({ added: [], removed: [] });
  });

  it("lists proxies present in only one table with null shares", () => {
    const fewer = buildTable({ ...allActive, backends: allActive.backends.slice(1) });
    const r = diffTables(before, fewer);
    const gone = r.proxies.find((x) => x.address === "10.20.0.10")!;
    expect(gone.after).toBeNull();
    expect(gone.before!.primary).toBeGreaterThan(0);
    // Rendezvous: only rows that had the removed proxy as primary change primary.
    expect(r.primaryChanged.count).toBe(gone.before!.primary);
    expect(r.backends).toEqual({ added: [], removed: ["10.20.0.10"] });
    expect(diffTables(fewer, before).backends).toEqual({ added: ["10.20.0.10"], removed: [] });
  });

  it("sees a health change of a proxy that is nowhere primary, though no row moves", () => {
    // The draining proxy is in no primary slot; marking it unhealthy too changes no row.
    const unhealthy = buildTable({
      ...drainSpec!,
      backends: drainSpec!.backends.map((b) => (b.state === "draining" ? { ...b, healthy: false } : b)),
    });
    const r = diffTables(after, unhealthy);
    expect(r.primaryChanged.count).toBe(0);
    expect(r.secondaryChanged.count).toBe(0);
    expect(r.statusChanges).toEqual([
      {
        address: "10.20.0.13",
        before: { state: "draining", healthy: true },
        after: { state: "draining", healthy: false },
        primaryRowsChanged: 0,
      },
    ]);
  });

  it("lists added and removed binds", () => {
    const [v4, prefix, v6] = allActive.binds;
    const b = buildTable({
      ...allActive,
      binds: [
        prefix!,
        v6!,
        { address: "198.51.100.7", prefixBits: 32, proto: "udp", portStart: 53, portEnd: 54 },
      ],
    });
    const r = diffTables(before, b);
    expect(r.binds.added).toEqual(["udp 198.51.100.7/32:53-54"]);
    expect(r.binds.removed).toEqual(allActive.binds.filter((x) => x !== prefix && x !== v6).map(bindLabel));
    expect(r.binds.removed).toContain(`${v4!.proto} ${v4!.address}/32:${v4!.portStart}`);
    expect(bindLabel(v6!)).toBe(`tcp [${v6!.address}/128]:443`);
    // Binds do not take part in row assignment.
    expect(r.primaryChanged.count).toBe(0);
  });

  it("estimates the flows a new hash key moves although no row changed", () => {
    const rekeyed = buildTable({ ...allActive, hashKey: otherKey });
    const r = diffTables(before, rekeyed);
    expect(r.hashKeyChanged).toBe(true);
    expect(r.primaryChanged.count).toBe(0);
    expect(r.flowsMoved!.sampled).toBe(FLOW_SAMPLE_SIZE);
    // Each flow lands on an independent row: it keeps its proxy with probability sum(share^2).
    const expected = expectedMoveFraction(before);
    expect(expected).toBeGreaterThan(0.8);
    expect(Math.abs(r.flowsMoved!.fraction - expected)).toBeLessThan(0.03);
    expect(r.flowsMoved!.moved).toBe(Math.round(r.flowsMoved!.fraction * FLOW_SAMPLE_SIZE));
    // The sample is fixed: the same tables give the same estimate.
    expect(diffTables(before, rekeyed).flowsMoved).toEqual(r.flowsMoved);
  });

  it("estimates no moved flow for a new key when a single proxy serves every row", () => {
    const one = { ...allActive, backends: allActive.backends.slice(0, 1) };
    const r = diffTables(buildTable(one), buildTable({ ...one, hashKey: otherKey }), { sampleFlows: 500 });
    expect(r.hashKeyChanged).toBe(true);
    expect(r.flowsMoved).toEqual({ sampled: 500, moved: 0, fraction: 0 });
  });

  it("treats a hash field change like a key change", () => {
    const srcOnly = withFields(before, ["src_addr"]);
    const withPort = withFields(before, ["src_port", "src_addr"]);
    const r = diffTables(srcOnly, withPort);
    expect(r.hashKeyChanged).toBe(false);
    expect(r.hashFields).toEqual({
      before: ["src_addr"],
      after: ["src_addr", "src_port"],
      changed: true,
    });
    expect(r.primaryChanged.count).toBe(0);
    expect(Math.abs(r.flowsMoved!.fraction - expectedMoveFraction(before))).toBeLessThan(0.03);
    // A table without fields hashes the default (src_addr): same as saying so.
    expect(diffTables(before, srcOnly).hashFields.changed).toBe(false);
    expect(diffTables(before, srcOnly).flowsMoved).toBeNull();
  });

  it("reads hash fields from GLBD v3 files, and reports a migration field set without moved flows", () => {
    const [a] = decodeGlbd(encodeGlbd([withFields(before, ["src_addr"])]));
    const [b] = decodeGlbd(encodeGlbd([withFields(before, ["src_addr"], ["src_addr", "src_port"])]));
    const r = diffTables(a!, b!);
    expect(r.hashFields.changed).toBe(false);
    expect(r.altHashFields).toEqual({ before: null, after: ["src_addr", "src_port"], changed: true });
    // The alternate set only adds hops 3-4; primaries follow the main fields.
    expect(r.flowsMoved).toBeNull();
    const [c] = decodeGlbd(encodeGlbd([withFields(before, ["src_addr", "dst_port"])]));
    expect(diffTables(a!, c!).hashFields.changed).toBe(true);
  });

  it("rejects a bad sample size and a table whose rows point outside its backends", () => {
    expect(() => diffTables(before, after, { sampleFlows: 0 })).toThrow(RangeError);
    const broken = { ...after, primary: after.primary.map(() => 200) };
    expect(() => diffTables(before, broken)).toThrow(/table b row 0 points outside/);
  });
});

describe("diffTableFiles", () => {
  it("diffs tables by index and reports the table count", () => {
    const a = buildTable(allActive);
    const b = buildTable(drainSpec!);
    const r = diffTableFiles([a], [b, a]);
    expect(r.tablesBefore).toBe(1);
    expect(r.tablesAfter).toBe(2);
    expect(r.tablesAdded).toEqual([1]);
    expect(r.tablesRemoved).toEqual([]);
    expect(r.tables.map((t) => t.index)).toEqual([0]);
    expect(r.tables[0]!.diff.primaryChanged.count).toBe(diffTables(a, b).primaryChanged.count);
    expect(diffTableFiles([b, a], [a]).tablesRemoved).toEqual([1]);
  });
});
