/**
 * The rendezvous order's hot loop in WebAssembly (rank.wat): SipHash-2-4 on native i64 ranks the
 * rows of computeRendezvousOrder() about 3x faster than the 32-bit-halves JavaScript in
 * rendezvous.ts, which stays the reference and the fallback (the two are compared in
 * rank-wasm.test.ts on random fleets).
 *
 * The module is small (rank-wasm.generated.ts says its size; a test keeps it under 4 KiB), so it is
 * compiled synchronously on first use: browsers refuse a synchronous `new WebAssembly.Module` on
 * the main thread only above 4 KiB (Chrome's limit). A big-endian host takes the JavaScript path
 * (the caller writes the module's memory through Int32Array views). Where
 * WebAssembly is missing or refused (a Content-Security-Policy without 'wasm-unsafe-eval', as
 * the console's), the loader returns null and the JavaScript path runs; nothing else changes.
 */
import { TABLE_ROWS, type RendezvousContext } from "../types";
import { RANK_WASM_BASE64 } from "./rank-wasm.generated";

/**
 * The part of the WebAssembly JavaScript API used here, declared structurally: this package's
 * libraries (ES2023 + @types/node) do not declare the global, and browsers may lack it.
 */
export interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { readonly exports: object };
}

/** An exported immutable i32 global (WebAssembly.Global). */
interface I32Global {
  readonly value: number;
}

/** What rank.wat exports; the layout offsets (bytes into `memory`) are defined there only. */
export interface RankExports {
  readonly memory: { readonly buffer: ArrayBuffer };
  readonly INIT: I32Global;
  readonly BLOCKS: I32Global;
  readonly COUNTS: I32Global;
  readonly OUT: I32Global;
  /** Ranks rows [first, end) for n proxies, k indexes a row, written from OUT on. */
  rank(n: number, k: number, first: number, end: number): void;
}

/** Rows ranked per call into WebAssembly (see rankRowsWasm); 64 calls a table. */
const ROWS_PER_CALL = 1024;

/** Message words a proxy may have after the row seed: 3 blocks (IPv6) of 2 words. */
const BLOCK_WORDS = 6;

/** The assembled module's bytes (decoded on each call; it is loaded once per process). */
export function rankWasmBytes(): Uint8Array {
  return Uint8Array.from(atob(RANK_WASM_BASE64), (c) => c.charCodeAt(0));
}

/**
 * Compiles and instantiates rank.wat with `wasm` (globalWasm(), possibly undefined); null when it
 * is absent or refuses (CSP, an engine without multi-value results).
 */
export function loadRanker(wasm: WasmApi | undefined): RankExports | null {
  // Linear memory is little-endian; the caller's Int32Array views of it are the host's order.
  if (!wasm || !LITTLE_ENDIAN_HOST) return null;
  try {
    return new wasm.Instance(new wasm.Module(rankWasmBytes())).exports as unknown as RankExports;
  } catch {
    return null;
  }
}

/** Whether typed arrays here are little-endian, as WebAssembly memory always is. */
const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The engine's WebAssembly, if it has one. */
export function globalWasm(): WasmApi | undefined {
  return (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
}

/** undefined until the first build tries to load it. */
let ranker: RankExports | null | undefined;
let enabled = true;

/** Turns the WebAssembly path off (true: on, the default) for the reference path in tests and benches. */
export function setWasmRanking(on: boolean): void {
  enabled = on;
}

function activeRanker(): RankExports | null {
  if (!enabled) return null;
  if (ranker === undefined) ranker = loadRanker(globalWasm());
  return ranker;
}

/**
 * Writes the k lowest-score proxy indexes of each row in [first, end) to out[(row - first) * k ..],
 * as rankRow() does one row at a time. Returns false, writing nothing, when WebAssembly is off or
 * unavailable. Requires 1 <= k <= ctx.count (<= MAX_BACKENDS).
 */
export function rankRowsWasm(
  ctx: RendezvousContext,
  k: number,
  out: Uint8Array,
  first = 0,
  end = TABLE_ROWS,
): boolean {
  const r = activeRanker();
  if (!r) return false;
  const { buffer } = r.memory;
  const n = ctx.count;
  new Int32Array(buffer, r.INIT.value, 8).set(ctx.initState);
  const blocks = new Int32Array(buffer, r.BLOCKS.value, n * BLOCK_WORDS);
  const counts = new Uint8Array(buffer, r.COUNTS.value, n);
  for (let p = 0; p < n; p++) {
    const start = ctx.proxyWordStart[p]!;
    const count = ctx.proxyBlocks[p]!;
    blocks.set(ctx.proxyWords.subarray(start, start + count * 2), p * BLOCK_WORDS);
    counts[p] = count;
  }
  const outAt = r.OUT.value;
  // V8 runs a WebAssembly function in its baseline tier (Liftoff) until a call returns after
  // the optimised code is ready: there is no on-stack replacement. One call for the whole
  // table ran the first build of a process unoptimised (279 ms instead of 31 ms at 16 proxies,
  // the case of every `tidectl table build`); calls of ROWS_PER_CALL rows move to the
  // optimised code after the first few (33.7 ms for that first build).
  const chunk = Math.min(ROWS_PER_CALL, Math.floor((buffer.byteLength - outAt) / k));
  for (let row = first; row < end; row += chunk) {
    const stop = Math.min(end, row + chunk);
    r.rank(n, k, row, stop);
    out.set(new Uint8Array(buffer, outAt, (stop - row) * k), (row - first) * k);
  }
  return true;
}
