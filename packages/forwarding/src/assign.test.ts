import { describe, expect, it } from "vitest";
import { unhex } from "./__fixtures__/testdata";
import { assignRows, AssignError } from "./assign";
import { computeRendezvousOrder, rendezvousRowOrder } from "./rendezvous";
import { TABLE_ROWS, type ProxyStatus } from "./types";

const seed = unhex("0f1e2d3c4b5a69788796a5b4c3d2e1f0");
const proxies = ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"];
const order = computeRendezvousOrder(seed, proxies);
const up = (): ProxyStatus[] => proxies.map(() => ({ state: "active", healthy: true }));

/** First row (by scanning) whose full order starts with proxies a, b (in that order). */
function rowStartingWith(a: number, b: number): number {
  for (let row = 0; row < TABLE_ROWS; row++) {
    const o = rendezvousRowOrder(seed, proxies, row);
    if (o[0] === a && o[1] === b) return row;
  }
  throw new Error(`no row starts with ${a}, ${b}`);
}

describe("assignRows", () => {
  it("puts the first two of the order in place when everything is active (both variants)", () => {
    for (const variant of ["glb", "tide"] as const) {
      const rows = assignRows(order, up(), { variant });
      for (const row of [0, 1, 30000, 65535]) {
        const o = rendezvousRowOrder(seed, proxies, row);
        expect([rows.primary[row], rows.secondary[row]]).toEqual([o[0], o[1]]);
      }
    }
  });

  it("swaps a draining primary with an active secondary (both variants)", () => {
    const states = up();
    states[2] = { state: "draining", healthy: true };
    const row = rowStartingWith(2, 4);
    for (const variant of ["glb", "tide"] as const) {
      const rows = assignRows(order, states, { variant });
      expect([rows.primary[row], rows.secondary[row]]).toEqual([4, 2]);
    }
  });

  it("leaves inactive proxies out of every row (both variants)", () => {
    const states = up();
    states[1] = { state: "inactive", healthy: true };
    for (const variant of ["glb", "tide"] as const) {
      const rows = assignRows(order, states, { variant });
      expect(rows.primary.includes(1)).toBe(false);
      expect(rows.secondary.includes(1)).toBe(false);
      const row = rowStartingWith(1, 3);
      expect(rows.primary[row]).toBe(3);
      expect(rows.secondary[row]).toBe(rendezvousRowOrder(seed, proxies, row)[2]);
    }
  });

  it("fix 1: a filling secondary takes over from a draining primary only in tide", () => {
    const states = up();
    states[2] = { state: "draining", healthy: true };
    states[4] = { state: "filling", healthy: true };
    const row = rowStartingWith(2, 4);
    const glb = assignRows(order, states, { variant: "glb" });
    const tide = assignRows(order, states, { variant: "tide" });
    expect([glb.primary[row], glb.secondary[row]]).toEqual([2, 4]);
    expect([tide.primary[row], tide.secondary[row]]).toEqual([4, 2]);
  });

  it("fix 2: glb swaps to an unhealthy secondary (it checks only its state); tide does not", () => {
    const states = up();
    states[2] = { state: "draining", healthy: true };
    states[4] = { state: "active", healthy: false };
    const row = rowStartingWith(2, 4);
    const third = rendezvousRowOrder(seed, proxies, row)[2]!;
    const fourth = rendezvousRowOrder(seed, proxies, row)[3]!;
    const glb = assignRows(order, states, { variant: "glb" });
    const tide = assignRows(order, states, { variant: "tide" });
    expect([glb.primary[row], glb.secondary[row]]).toEqual([4, 2]);
    // Neither of the first two is usable: tide takes the first two usable ones.
    expect([tide.primary[row], tide.secondary[row]]).toEqual([third, fourth]);
  });

  it("fix 3: when both first proxies are unhealthy, glb keeps a dead pair; tide moves on", () => {
    const states = up();
    states[0] = { state: "active", healthy: false };
    states[5] = { state: "active", healthy: false };
    const row = rowStartingWith(0, 5);
    const o = rendezvousRowOrder(seed, proxies, row);
    const glb = assignRows(order, states, { variant: "glb" });
    const tide = assignRows(order, states, { variant: "tide" });
    // glb: primary bad, secondary "active" => swapped, still both dead.
    expect([glb.primary[row], glb.secondary[row]]).toEqual([5, 0]);
    expect([tide.primary[row], tide.secondary[row]]).toEqual([o[2], o[3]]);
  });

  it("fix 4: a single usable proxy takes both slots in tide", () => {
    const states: ProxyStatus[] = proxies.map(() => ({ state: "active", healthy: false }));
    states[3] = { state: "active", healthy: true };
    const tide = assignRows(order, states, { variant: "tide" });
    const glb = assignRows(order, states, { variant: "glb" });
    const row = rowStartingWith(0, 5);
    expect([tide.primary[row], tide.secondary[row]]).toEqual([3, 3]);
    expect([glb.primary[row], glb.secondary[row]]).toEqual([5, 0]);
    // Rows whose first proxy is the usable one keep the order's second as secondary.
    const own = rowStartingWith(3, 1);
    expect([tide.primary[own], tide.secondary[own]]).toEqual([3, 1]);
  });

  it("gives a pool with one non-inactive proxy that proxy in both slots", () => {
    const states: ProxyStatus[] = proxies.map(() => ({ state: "inactive", healthy: true }));
    states[4] = { state: "draining", healthy: true };
    for (const variant of ["glb", "tide"] as const) {
      const rows = assignRows(order, states, { variant });
      expect(rows.primary.every((p) => p === 4) && rows.secondary.every((p) => p === 4)).toBe(true);
    }
  });

  it("refuses a pool where every proxy is inactive, and misaligned states", () => {
    expect(() =>
      assignRows(
        order,
        proxies.map(() => ({ state: "inactive", healthy: true })),
      ),
    ).toThrow(AssignError);
    expect(() => assignRows(order, up().slice(1))).toThrow(/index-aligned/);
  });

  it("gives the same rows with a short order prefix as with the full order, whatever the states", () => {
    const many = Array.from({ length: 24 }, (_, i) => `10.1.${i}.1`);
    const short = computeRendezvousOrder(seed, many, { depth: 2 });
    const full = computeRendezvousOrder(seed, many, { depth: 24 });
    const kinds: ProxyStatus[] = [
      { state: "inactive", healthy: true },
      { state: "draining", healthy: true },
      { state: "active", healthy: false },
      { state: "filling", healthy: true },
      { state: "active", healthy: true },
    ];
    // Deterministic pseudo-random mixes, most proxies not usable to force deep scans.
    for (let mix = 0; mix < 4; mix++) {
      const states = many.map((_, i) => kinds[(i * 7 + mix * 3) % (mix === 3 ? 4 : 5)]!);
      for (const variant of ["glb", "tide"] as const) {
        const a = assignRows(short, states, { variant });
        const b = assignRows(full, states, { variant });
        expect(Buffer.from(a.primary.buffer).equals(Buffer.from(b.primary.buffer))).toBe(true);
        expect(Buffer.from(a.secondary.buffer).equals(Buffer.from(b.secondary.buffer))).toBe(true);
      }
    }
  });
});
