/** The goldens were written by glb-director's own builder: both variants must reproduce them. */
import { describe, expect, it } from "vitest";
import { GOLDEN_NAMES, goldenBin, goldenJson, goldenReadmeHashes, vectors } from "./__fixtures__/testdata";
import { buildTable } from "./build";
import { tableContentHash } from "./content-hash";
import { decodeGlbd, encodeGlbd } from "./glbd-codec";
import { parseGlbConfigJson } from "./glb-json";

describe.each(GOLDEN_NAMES)("golden %s", (name) => {
  const specs = parseGlbConfigJson(goldenJson(name));
  const bin = goldenBin(name);

  it("matches the sha256 published in the README", () => {
    expect(tableContentHash(bin)).toBe(goldenReadmeHashes().get(`${name}.bin`));
  });

  it.each(["glb", "tide"] as const)("is rebuilt byte-for-byte by variant %s", (variant) => {
    const built = encodeGlbd(specs.map((s) => buildTable(s, { variant })));
    expect(built.length).toBe(bin.length);
    expect(Buffer.from(built).equals(Buffer.from(bin))).toBe(true);
  });

  it("decodes and re-encodes to the same bytes", () => {
    const tables = decodeGlbd(bin);
    expect(tables).toHaveLength(specs.length);
    expect(Buffer.from(encodeGlbd(tables)).equals(Buffer.from(bin))).toBe(true);
  });

  it("decodes the JSON's backends, states included (inactive recognised by being in no row)", () => {
    const tables = decodeGlbd(bin);
    tables.forEach((t, i) => {
      expect(t.backends).toEqual(specs[i]!.backends);
      expect(t.binds).toEqual(specs[i]!.binds);
    });
  });
});

describe("golden rows recorded by the independent reference", () => {
  it.each(vectors().goldenRows.map((g) => [g.file, g.row, g] as const))("%s row %i", (file, row, g) => {
    const name = file.replace(/\.bin$/, "") as (typeof GOLDEN_NAMES)[number];
    const table = decodeGlbd(goldenBin(name))[g.table]!;
    expect(table.backends[table.primary[row]!]!.address).toBe(g.primary);
    expect(table.backends[table.secondary[row]!]!.address).toBe(g.secondary);
  });
});

describe("golden shapes", () => {
  it("drain: the draining proxy is never primary and doubles its secondary share", () => {
    const [t] = decodeGlbd(goldenBin("golden-drain"));
    const idx = t!.backends.findIndex((b) => b.state === "draining");
    expect(t!.backends[idx]!.address).toBe("10.20.0.13");
    expect(t!.primary.includes(idx)).toBe(false);
    const secondaryRows = t!.secondary.filter((s) => s === idx).length;
    expect(secondaryRows).toBeGreaterThan((65536 / 12) * 1.7);
  });

  it("inactive: the proxy keeps its slot with state 2 and is in no row", () => {
    const bin = goldenBin("golden-inactive");
    const [t] = decodeGlbd(bin);
    const idx = t!.backends.findIndex((b) => b.address === "10.20.0.15");
    expect(idx).toBe(5);
    expect(t!.backends[idx]!.state).toBe("inactive");
    // Raw state field of slot 5: header 24 + num_backends 4 + 5 * 24 + 20.
    expect(new DataView(bin.buffer, bin.byteOffset).getUint16(24 + 4 + 5 * 24 + 20, true)).toBe(2);
    expect(t!.primary.includes(idx) || t!.secondary.includes(idx)).toBe(false);
  });
});
