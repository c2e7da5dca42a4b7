/**
 * The WebAssembly ranking (rank.wat) against the JavaScript reference (rankRow in rendezvous.ts),
 * and the committed module bytes against a fresh assembly of rank.wat.
 */
import { afterEach, describe, expect, it } from "vitest";
import { assembleRankWasm, renderRankWasmModule } from "../../scripts/assemble-rank-wasm";
import { unhex } from "../__fixtures__/testdata";
import { computeRendezvousOrder, prepareRendezvous, rankRow } from "../rendezvous";
import { MAX_BACKENDS, TABLE_ROWS } from "../types";
import { RANK_WASM_BASE64 } from "./rank-wasm.generated";
import {
  globalWasm,
  loadRanker,
  rankRowsWasm,
  rankWasmBytes,
  setWasmRanking,
  type WasmApi,
} from "./rank-wasm";

/** Deterministic PRNG (mulberry32), so a failure names a fleet that can be rebuilt. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Family = "ipv4" | "ipv6" | "mixed";

/** n distinct proxy addresses of the given family mix, drawn from `rand`. */
function fleet(rand: () => number, n: number, family: Family): string[] {
  const out = new Set<string>();
  while (out.size < n) {
    const v6 = family === "ipv6" || (family === "mixed" && rand() < 0.5);
    const part = (max: number) => Math.floor(rand() * max);
    out.add(
      v6
        ? `2001:db8:${Array.from({ length: 6 }, () => part(0x10000).toString(16)).join(":")}`
        : `${part(224)}.${part(256)}.${part(256)}.${part(256)}`,
    );
  }
  return [...out];
}

function randomSeed(rand: () => number): Uint8Array {
  return Uint8Array.from({ length: 16 }, () => Math.floor(rand() * 256));
}

/** The reference: rankRow (JavaScript) for rows [first, end), k a row. */
function rankRowsJs(
  seed: Uint8Array,
  addresses: string[],
  k: number,
  first: number,
  end: number,
): Uint8Array {
  const ctx = prepareRendezvous(seed, addresses);
  const out = new Uint8Array((end - first) * k);
  const hi = new Int32Array(k + 1);
  const lo = new Int32Array(k + 1);
  const idx = new Uint8Array(k + 1);
  for (let row = first; row < end; row++) rankRow(ctx, row, k, out, (row - first) * k, hi, lo, idx);
  return out;
}

function rankRowsWasmOrThrow(
  seed: Uint8Array,
  addresses: string[],
  k: number,
  first: number,
  end: number,
): Uint8Array {
  const out = new Uint8Array((end - first) * k);
  if (!rankRowsWasm(prepareRendezvous(seed, addresses), k, out, first, end)) {
    throw new Error("WebAssembly ranking unavailable in this Node");
  }
  return out;
}

afterEach(() => setWasmRanking(true));

describe("rank.wat module", () => {
  it("is the committed bytes of a fresh assembly of rank.wat (run `npm run wasm -w @tide/forwarding`)", async () => {
    const bytes = await assembleRankWasm();
    expect(Buffer.from(rankWasmBytes()).toString("base64")).toBe(Buffer.from(bytes).toString("base64"));
    expect(RANK_WASM_BASE64).toBe(Buffer.from(bytes).toString("base64"));
    // The generated file is exactly what the script writes (header and formatting included).
    const { readFile } = await import("node:fs/promises");
    const committed = await readFile(new URL("./rank-wasm.generated.ts", import.meta.url), "utf8");
    expect(committed).toBe(await renderRankWasmModule(bytes));
  });

  it("stays under the 4 KiB browsers allow to compile synchronously on the main thread", () => {
    expect(rankWasmBytes().length).toBeLessThanOrEqual(4096);
  });

  it("loads in Node, so the golden and vector tests run the WebAssembly path", () => {
    expect(globalWasm()).toBeDefined();
    expect(loadRanker(globalWasm())).not.toBeNull();
  });

  it("falls back (null) where WebAssembly is absent or refuses to compile", () => {
    expect(loadRanker(undefined)).toBeNull();
    const refusing: WasmApi = {
      Module: function () {
        throw new Error("Refused to compile: 'wasm-unsafe-eval' is not an allowed source");
      } as unknown as WasmApi["Module"],
      Instance: globalWasm()!.Instance,
    };
    expect(loadRanker(refusing)).toBeNull();
  });
});

describe("WebAssembly ranking equals the JavaScript reference", () => {
  // Every 13th size from 1 to 256 plus the edges, in each family mix, with a random seed, depth
  // and row window (the first and last rows included in some).
  const sizes = [1, 2, 3, 4, 5, ...Array.from({ length: 20 }, (_, i) => 7 + i * 13), 255, 256];
  const cases = (["ipv4", "ipv6", "mixed"] as const).flatMap((family, f) =>
    sizes.map((n, i) => [family, n, f * 1000 + i] as const),
  );

  it.each(cases)("%s fleet of %i proxies (case %i)", (family, n, caseSeed) => {
    const rand = prng(caseSeed + 1);
    const addresses = fleet(rand, n, family);
    const seed = randomSeed(rand);
    const k = rand() < 0.25 ? n : 1 + Math.floor(rand() * Math.min(n, 8));
    const span = Math.max(1, Math.floor(4096 / n));
    const pick = rand();
    const first = pick < 0.2 ? 0 : pick < 0.4 ? TABLE_ROWS - span : Math.floor(rand() * (TABLE_ROWS - span));
    const end = first + span;
    expect(rankRowsWasmOrThrow(seed, addresses, k, first, end)).toEqual(
      rankRowsJs(seed, addresses, k, first, end),
    );
  });

  it.each([1, 2, 3, 4, 6])("ranks tied scores as the reference does, lower index first (depth %i)", (k) => {
    // The same address twice scores the same in every row; at depth < 6 a tie with the worst
    // kept score must leave the earlier index in place.
    const seed = unhex("000102030405060708090a0b0c0d0e0f");
    const addresses = ["10.0.0.1", "10.0.0.2", "10.0.0.1", "2001:db8::1", "2001:db8::1", "10.0.0.2"];
    const wasm = rankRowsWasmOrThrow(seed, addresses, k, 0, 2048);
    expect(wasm).toEqual(rankRowsJs(seed, addresses, k, 0, 2048));
    for (let row = 0; row < 2048; row++) {
      const o = Array.from(wasm.subarray(row * k, row * k + k));
      for (const [a, b] of [
        [0, 2],
        [1, 5],
        [3, 4],
      ] as const) {
        if (o.includes(b)) expect(o.indexOf(a)).toBe(o.indexOf(b) - 1);
      }
    }
  });

  it.each([
    ["ipv4", 16, 4],
    ["mixed", 40, 4],
    ["ipv6", 12, 12],
    ["mixed", 64, 64],
    ["ipv4", 256, 4],
  ] as const)(
    "whole table: %s, %i proxies, depth %i",
    (family, n, depth) => {
      const rand = prng(n * 7 + depth);
      const addresses = fleet(rand, n, family);
      const seed = randomSeed(rand);
      const wasm = computeRendezvousOrder(seed, addresses, { depth });
      setWasmRanking(false);
      const js = computeRendezvousOrder(seed, addresses, { depth });
      expect(Buffer.from(wasm.order).equals(Buffer.from(js.order))).toBe(true);
    },
    // Ranking a whole table in JavaScript takes up to ~1 s at 256 proxies on this machine.
    30_000,
  );

  it("refuses more than 256 proxies before ranking, on either path", () => {
    const addresses = fleet(prng(300), 300, "mixed");
    for (const on of [true, false]) {
      setWasmRanking(on);
      for (const n of [MAX_BACKENDS + 1, 300]) {
        expect(() => computeRendezvousOrder(new Uint8Array(16), addresses.slice(0, n))).toThrow(/256/);
      }
    }
  });
});
