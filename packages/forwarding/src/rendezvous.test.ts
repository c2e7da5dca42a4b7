import { describe, expect, it } from "vitest";
import { hex, unhex, vectors } from "./__fixtures__/testdata";
import { computeRendezvousOrder, rendezvousRowOrder, rowSeed } from "./rendezvous";
import { TABLE_ROWS } from "./types";

describe("rendezvous order", () => {
  const v = vectors().rendezvous;

  it("covers the three published rows", () => {
    expect(v.filter((x) => x.source === "published").map((x) => x.row)).toEqual([0x0000, 0xffff, 0xbb44]);
  });

  it.each(v.map((x) => [x.row, x.proxies.join(" "), x] as const))("row %i of [%s]", (row, _p, x) => {
    const seed = unhex(x.seed);
    expect(hex(rowSeed(seed, row))).toBe(x.rowSeed);
    expect(rendezvousRowOrder(seed, x.proxies, row).map((i) => x.proxies[i])).toEqual(x.order);
  });

  it("keeps a prefix equal to the full order's first entries, for every row", () => {
    const seed = unhex("0f1e2d3c4b5a69788796a5b4c3d2e1f0");
    const proxies = Array.from({ length: 10 }, (_, i) =>
      i % 3 === 0 ? `2001:db8::${i + 1}` : `10.0.${i}.1`,
    );
    const full = computeRendezvousOrder(seed, proxies, { depth: 10 });
    const short = computeRendezvousOrder(seed, proxies, { depth: 3 });
    expect(full.depth).toBe(10);
    expect(short.depth).toBe(3);
    let mismatches = 0;
    for (let row = 0; row < TABLE_ROWS; row++) {
      for (let k = 0; k < 3; k++) if (short.order[row * 3 + k] !== full.order[row * 10 + k]) mismatches++;
    }
    expect(mismatches).toBe(0);
    for (const row of [0, 4242, 65535]) {
      expect(Array.from(full.order.subarray(row * 10, row * 10 + 10))).toEqual(
        rendezvousRowOrder(seed, proxies, row),
      );
    }
  });

  it("never lets other proxies change the relative order of two proxies", () => {
    const seed = unhex("34567890123456783456789012345678");
    const all = ["1.2.3.4", "2.3.4.5", "3.4.5.6", "4.5.6.7", "5.6.7.8"];
    const pair = computeRendezvousOrder(seed, ["1.2.3.4", "3.4.5.6"]);
    const five = computeRendezvousOrder(seed, all, { depth: 5 });
    for (let row = 0; row < TABLE_ROWS; row += 97) {
      const rowOrder = Array.from(five.order.subarray(row * 5, row * 5 + 5)).map((i) => all[i]);
      const filtered = rowOrder.filter((a) => a === "1.2.3.4" || a === "3.4.5.6");
      expect(filtered).toEqual(
        [pair.order[row * 2], pair.order[row * 2 + 1]].map((i) => ["1.2.3.4", "3.4.5.6"][i!]),
      );
    }
  });

  it("gives each proxy about an equal share of first places", () => {
    const seed = unhex("49a3d861d661ae5ab06ed9326871a2f5");
    const proxies = Array.from({ length: 16 }, (_, i) => `192.0.2.${i + 1}`);
    const o = computeRendezvousOrder(seed, proxies);
    const firsts = new Array<number>(16).fill(0);
    for (let row = 0; row < TABLE_ROWS; row++) firsts[o.order[row * o.depth]!]!++;
    for (const c of firsts) expect(Math.abs(c - TABLE_ROWS / 16)).toBeLessThan(TABLE_ROWS / 16 / 10);
  });

  it("rejects more than 256 proxies and bad rows", () => {
    const seed = new Uint8Array(16);
    expect(() =>
      computeRendezvousOrder(
        seed,
        Array.from({ length: 257 }, (_, i) => `10.${i >> 8}.${i & 255}.1`),
      ),
    ).toThrow(/256/);
    expect(() => rowSeed(seed, 65536)).toThrow(/row/);
  });
});
