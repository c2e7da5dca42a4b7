/**
 * Rendezvous (highest-random-weight, here lowest-score) ordering of proxies per row, as GLB does it:
 *   row_seed = siphash(seed, u32be(row))                       (8 bytes)
 *   score    = siphash(seed, row_seed || ip bytes), output bytes read as a big-endian u64
 *   order    = proxies by ascending score (ties: lower proxy index first, as a stable sort would)
 *
 * The order does not depend on proxy states, so it is computed once per (seed, address list)
 * and reused by assignRows() whenever a state changes.
 *
 * Cost: the row_seed block is shared by every proxy of a row, so it is compressed once per row;
 * each proxy then costs its address block(s) + finalization (6 SipRounds for IPv4).
 * computeRendezvousOrder() runs the same loop in WebAssembly where it can (wasm/rank.wat, native
 * i64); the JavaScript here is the reference and the fallback.
 */
import { parseAddress } from "./address";
import { sipBlocks, sipFinish, sipInit, sipKey, sipMessageWords } from "./siphash";
import { MAX_BACKENDS, TABLE_ROWS, type RendezvousContext } from "./types";
import { rankRowsWasm } from "./wasm/rank-wasm";

export interface RendezvousOrder {
  readonly seed: Uint8Array;
  /** Proxy addresses in index order (canonical text). */
  readonly addresses: readonly string[];
  /** Entries kept per row: the `depth` lowest scores of all proxies (inactive ones included). */
  readonly depth: number;
  /** TABLE_ROWS x depth proxy indexes; row r's order is order[r*depth .. r*depth+depth). */
  readonly order: Uint8Array;
}

export interface RendezvousOptions {
  /**
   * Prefix length kept per row (1..addresses.length). Default: DEFAULT_DEPTH (4).
   * assignRows() recomputes the full order of a row when the prefix does not hold enough
   * eligible proxies, so a short prefix never changes results, only speed and memory.
   */
  depth?: number;
}

/** Default order prefix per row: enough for the usual "one proxy not active" pool. */
export const DEFAULT_DEPTH = 4;

const contexts = new WeakMap<RendezvousOrder, RendezvousContext>();

/**
 * Score half for comparisons: byte-swapped (big-endian reading) with the sign bit flipped, so
 * signed int32 order equals unsigned order and every value stays a small integer for the JIT.
 */
function scoreKey(x: number): number {
  return (((x << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24)) ^ 0x80000000) | 0;
}

function bswap32(x: number): number {
  return ((x << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24)) >>> 0;
}

export function prepareRendezvous(seed: Uint8Array, addresses: readonly string[]): RendezvousContext {
  if (addresses.length > MAX_BACKENDS) {
    throw new RangeError(`at most ${MAX_BACKENDS} proxies per table, got ${addresses.length}`);
  }
  const initState = new Int32Array(8);
  sipInit(sipKey(seed), initState);
  const count = addresses.length;
  // Each proxy's message after the 8-byte row seed: its address bytes, then the length block.
  // The total length (8 + 4 or 8 + 16) is what goes into the final block.
  const proxyWords = new Int32Array(count * 6);
  const proxyWordStart = new Int32Array(count);
  const proxyBlocks = new Int32Array(count);
  const msg = new Uint8Array(24);
  const words = new Int32Array(8);
  let w = 0;
  addresses.forEach((address, i) => {
    const ip = parseAddress(address).bytes;
    msg.fill(0);
    msg.set(ip, 8);
    const blocks = sipMessageWords(msg, 8 + ip.length, words, 0);
    // Drop block 0 (the row seed placeholder); it is compressed per row.
    proxyWordStart[i] = w;
    proxyBlocks[i] = blocks - 1;
    for (let k = 2; k < blocks * 2; k++) proxyWords[w++] = words[k]!;
  });
  let ipv4Words: Int32Array | null = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    if (proxyBlocks[i] !== 1) {
      ipv4Words = null;
      break;
    }
    ipv4Words[i] = proxyWords[proxyWordStart[i]!]!;
  }
  return { initState, proxyWords, proxyWordStart, proxyBlocks, count, ipv4Words };
}

const rowWords = new Int32Array(2);
const rowSeedWords = new Int32Array(2);

/** Computes row_seed words (lo, hi) into `out`. */
function rowSeedInto(ctx: RendezvousContext, row: number, out: Int32Array): void {
  // Message: u32 big-endian row => its bytes read little-endian are bswap32(row); length 4.
  rowWords[0] = bswap32(row) | 0;
  rowWords[1] = 4 << 24;
  sipFinish(ctx.initState, rowWords, 0, 1, out, 0);
}

/** The 8-byte row seed for `row` (for vectors and explain output). */
export function rowSeed(seed: Uint8Array, row: number): Uint8Array {
  checkRow(row);
  const ctx = prepareRendezvous(seed, []);
  rowSeedInto(ctx, row, rowSeedWords);
  const out = new Uint8Array(8);
  const view = new DataView(out.buffer);
  view.setInt32(0, rowSeedWords[0]!, true);
  view.setInt32(4, rowSeedWords[1]!, true);
  return out;
}

function checkRow(row: number): void {
  if (!Number.isInteger(row) || row < 0 || row >= TABLE_ROWS) {
    throw new RangeError(`row must be an integer 0..${TABLE_ROWS - 1}, got ${row}`);
  }
}

const rowState = new Int32Array(8);
const scoreOut = new Int32Array(2);

/**
 * rankRow for an all-IPv4 proxy list, everything in locals (this is the table build's hot loop):
 * row seed (6 SipRounds), its compression into the row state (2), then per proxy the address
 * block + length 12 (2 rounds) and finalization (4). The first half of the first per-proxy round
 * (v0 += v1; v1 = rotl(v1, 13) ^ v0; v0 = rotl(v0, 32)) does not involve v2/v3, where the
 * address enters, so it is done once per row. Same results as the generic path (tested).
 */
function rankRowIpv4(
  init: Int32Array,
  ipWords: Int32Array,
  row: number,
  k: number,
  out: Uint8Array,
  outStart: number,
  topHi: Int32Array,
  topLo: Int32Array,
  topIdx: Uint8Array,
): void {
  const i0l = init[0]! | 0;
  const i0h = init[1]! | 0;
  const i1l = init[2]! | 0;
  const i1h = init[3]! | 0;
  const i2l = init[4]! | 0;
  const i2h = init[5]! | 0;
  const i3l = init[6]! | 0;
  const i3h = init[7]! | 0;
  let t = 0;
  let s = 0;
  // Row seed: siphash(seed, u32be(row)); one block = bytes read little-endian + length 4.
  const rl = bswap32(row) | 0;
  const rh = 4 << 24;
  let v0l = i0l;
  let v0h = i0h;
  let v1l = i1l;
  let v1h = i1h;
  let v2l = i2l;
  let v2h = i2h;
  let v3l = i3l ^ rl;
  let v3h = i3h ^ rh;
  for (let r = 0; r < 6; r++) {
    if (r === 2) {
      v0l ^= rl;
      v0h ^= rh;
      v2l ^= 0xff;
    }
    s = (v0l + v1l) | 0;
    v0h = (v0h + v1h + (((v0l & v1l) | ((v0l | v1l) & ~s)) >>> 31)) | 0;
    v0l = s;
    t = (v1h << 13) | (v1l >>> 19);
    v1l = ((v1l << 13) | (v1h >>> 19)) ^ v0l;
    v1h = t ^ v0h;
    t = v0l;
    v0l = v0h;
    v0h = t;
    s = (v2l + v3l) | 0;
    v2h = (v2h + v3h + (((v2l & v3l) | ((v2l | v3l) & ~s)) >>> 31)) | 0;
    v2l = s;
    t = (v3h << 16) | (v3l >>> 16);
    v3l = ((v3l << 16) | (v3h >>> 16)) ^ v2l;
    v3h = t ^ v2h;
    s = (v0l + v3l) | 0;
    v0h = (v0h + v3h + (((v0l & v3l) | ((v0l | v3l) & ~s)) >>> 31)) | 0;
    v0l = s;
    t = (v3h << 21) | (v3l >>> 11);
    v3l = ((v3l << 21) | (v3h >>> 11)) ^ v0l;
    v3h = t ^ v0h;
    s = (v2l + v1l) | 0;
    v2h = (v2h + v1h + (((v2l & v1l) | ((v2l | v1l) & ~s)) >>> 31)) | 0;
    v2l = s;
    t = (v1h << 17) | (v1l >>> 15);
    v1l = ((v1l << 17) | (v1h >>> 15)) ^ v2l;
    v1h = t ^ v2h;
    t = v2l;
    v2l = v2h;
    v2h = t;
  }
  const sl = v0l ^ v1l ^ v2l ^ v3l;
  const sh = v0h ^ v1h ^ v2h ^ v3h;
  // Row state: the initial state with the row seed (first 8 message bytes) compressed in.
  v0l = i0l;
  v0h = i0h;
  v1l = i1l;
  v1h = i1h;
  v2l = i2l;
  v2h = i2h;
  v3l = i3l ^ sl;
  v3h = i3h ^ sh;
  for (let r = 0; r < 2; r++) {
    s = (v0l + v1l) | 0;
    v0h = (v0h + v1h + (((v0l & v1l) | ((v0l | v1l) & ~s)) >>> 31)) | 0;
    v0l = s;
    t = (v1h << 13) | (v1l >>> 19);
    v1l = ((v1l << 13) | (v1h >>> 19)) ^ v0l;
    v1h = t ^ v0h;
    t = v0l;
    v0l = v0h;
    v0h = t;
    s = (v2l + v3l) | 0;
    v2h = (v2h + v3h + (((v2l & v3l) | ((v2l | v3l) & ~s)) >>> 31)) | 0;
    v2l = s;
    t = (v3h << 16) | (v3l >>> 16);
    v3l = ((v3l << 16) | (v3h >>> 16)) ^ v2l;
    v3h = t ^ v2h;
    s = (v0l + v3l) | 0;
    v0h = (v0h + v3h + (((v0l & v3l) | ((v0l | v3l) & ~s)) >>> 31)) | 0;
    v0l = s;
    t = (v3h << 21) | (v3l >>> 11);
    v3l = ((v3l << 21) | (v3h >>> 11)) ^ v0l;
    v3h = t ^ v0h;
    s = (v2l + v1l) | 0;
    v2h = (v2h + v1h + (((v2l & v1l) | ((v2l | v1l) & ~s)) >>> 31)) | 0;
    v2l = s;
    t = (v1h << 17) | (v1l >>> 15);
    v1l = ((v1l << 17) | (v1h >>> 15)) ^ v2l;
    v1h = t ^ v2h;
    t = v2l;
    v2l = v2h;
    v2h = t;
  }
  v0l ^= sl;
  v0h ^= sh;
  // Row prelude: the v0/v1 half of the first per-proxy round.
  s = (v0l + v1l) | 0;
  v0h = (v0h + v1h + (((v0l & v1l) | ((v0l | v1l) & ~s)) >>> 31)) | 0;
  v0l = s;
  t = (v1h << 13) | (v1l >>> 19);
  v1l = ((v1l << 13) | (v1h >>> 19)) ^ v0l;
  v1h = t ^ v0h;
  t = v0l;
  v0l = v0h;
  v0h = t;
  const r0l = v0l;
  const r0h = v0h;
  const r1l = v1l;
  const r1h = v1h;
  const r2l = v2l;
  const r2h = v2h;
  const r3l = v3l;
  const r3h = v3h;
  const count = ipWords.length;
  let filled = 0;
  for (let p = 0; p < count; p++) {
    const m = ipWords[p]! | 0;
    const mh = 12 << 24;
    v0l = r0l;
    v0h = r0h;
    v1l = r1l;
    v1h = r1h;
    v2l = r2l;
    v2h = r2h;
    v3l = r3l ^ m;
    v3h = r3h ^ mh;
    // Rest of the first round, then the second.
    s = (v2l + v3l) | 0;
    v2h = (v2h + v3h + (((v2l & v3l) | ((v2l | v3l) & ~s)) >>> 31)) | 0;
    v2l = s;
    t = (v3h << 16) | (v3l >>> 16);
    v3l = ((v3l << 16) | (v3h >>> 16)) ^ v2l;
    v3h = t ^ v2h;
    s = (v0l + v3l) | 0;
    v0h = (v0h + v3h + (((v0l & v3l) | ((v0l | v3l) & ~s)) >>> 31)) | 0;
    v0l = s;
    t = (v3h << 21) | (v3l >>> 11);
    v3l = ((v3l << 21) | (v3h >>> 11)) ^ v0l;
    v3h = t ^ v0h;
    s = (v2l + v1l) | 0;
    v2h = (v2h + v1h + (((v2l & v1l) | ((v2l | v1l) & ~s)) >>> 31)) | 0;
    v2l = s;
    t = (v1h << 17) | (v1l >>> 15);
    v1l = ((v1l << 17) | (v1h >>> 15)) ^ v2l;
    v1h = t ^ v2h;
    t = v2l;
    v2l = v2h;
    v2h = t;
    s = (v0l + v1l) | 0;
    v0h = (v0h + v1h + (((v0l & v1l) | ((v0l | v1l) & ~s)) >>> 31)) | 0;
    v0l = s;
    t = (v1h << 13) | (v1l >>> 19);
    v1l = ((v1l << 13) | (v1h >>> 19)) ^ v0l;
    v1h = t ^ v0h;
    t = v0l;
    v0l = v0h;
    v0h = t;
    s = (v2l + v3l) | 0;
    v2h = (v2h + v3h + (((v2l & v3l) | ((v2l | v3l) & ~s)) >>> 31)) | 0;
    v2l = s;
    t = (v3h << 16) | (v3l >>> 16);
    v3l = ((v3l << 16) | (v3h >>> 16)) ^ v2l;
    v3h = t ^ v2h;
    s = (v0l + v3l) | 0;
    v0h = (v0h + v3h + (((v0l & v3l) | ((v0l | v3l) & ~s)) >>> 31)) | 0;
    v0l = s;
    t = (v3h << 21) | (v3l >>> 11);
    v3l = ((v3l << 21) | (v3h >>> 11)) ^ v0l;
    v3h = t ^ v0h;
    s = (v2l + v1l) | 0;
    v2h = (v2h + v1h + (((v2l & v1l) | ((v2l | v1l) & ~s)) >>> 31)) | 0;
    v2l = s;
    t = (v1h << 17) | (v1l >>> 15);
    v1l = ((v1l << 17) | (v1h >>> 15)) ^ v2l;
    v1h = t ^ v2h;
    t = v2l;
    v2l = v2h;
    v2h = t;
    v0l ^= m;
    v0h ^= mh;
    v2l ^= 0xff;
    for (let r = 0; r < 4; r++) {
      s = (v0l + v1l) | 0;
      v0h = (v0h + v1h + (((v0l & v1l) | ((v0l | v1l) & ~s)) >>> 31)) | 0;
      v0l = s;
      t = (v1h << 13) | (v1l >>> 19);
      v1l = ((v1l << 13) | (v1h >>> 19)) ^ v0l;
      v1h = t ^ v0h;
      t = v0l;
      v0l = v0h;
      v0h = t;
      s = (v2l + v3l) | 0;
      v2h = (v2h + v3h + (((v2l & v3l) | ((v2l | v3l) & ~s)) >>> 31)) | 0;
      v2l = s;
      t = (v3h << 16) | (v3l >>> 16);
      v3l = ((v3l << 16) | (v3h >>> 16)) ^ v2l;
      v3h = t ^ v2h;
      s = (v0l + v3l) | 0;
      v0h = (v0h + v3h + (((v0l & v3l) | ((v0l | v3l) & ~s)) >>> 31)) | 0;
      v0l = s;
      t = (v3h << 21) | (v3l >>> 11);
      v3l = ((v3l << 21) | (v3h >>> 11)) ^ v0l;
      v3h = t ^ v0h;
      s = (v2l + v1l) | 0;
      v2h = (v2h + v1h + (((v2l & v1l) | ((v2l | v1l) & ~s)) >>> 31)) | 0;
      v2l = s;
      t = (v1h << 17) | (v1l >>> 15);
      v1l = ((v1l << 17) | (v1h >>> 15)) ^ v2l;
      v1h = t ^ v2h;
      t = v2l;
      v2l = v2h;
      v2h = t;
    }
    // Score = big-endian reading of the little-endian output bytes.
    const hi = scoreKey(v0l ^ v1l ^ v2l ^ v3l);
    const lo = scoreKey(v0h ^ v1h ^ v2h ^ v3h);
    if (filled === k) {
      const wh = topHi[k - 1]!;
      if (hi > wh || (hi === wh && lo >= topLo[k - 1]!)) continue;
      filled--;
    }
    let j = filled;
    while (j > 0) {
      const ph = topHi[j - 1]!;
      if (ph < hi || (ph === hi && topLo[j - 1]! <= lo)) break;
      topHi[j] = ph;
      topLo[j] = topLo[j - 1]!;
      topIdx[j] = topIdx[j - 1]!;
      j--;
    }
    topHi[j] = hi;
    topLo[j] = lo;
    topIdx[j] = p;
    filled++;
  }
  for (let i = 0; i < k; i++) out[outStart + i] = topIdx[i]!;
}

/**
 * Writes the `k` lowest-score proxy indexes of `row` into out[outStart..outStart+k), ascending.
 * Scratch arrays must have length >= k + 1.
 */
export function rankRow(
  ctx: RendezvousContext,
  row: number,
  k: number,
  out: Uint8Array,
  outStart: number,
  topHi: Int32Array,
  topLo: Int32Array,
  topIdx: Uint8Array,
): void {
  if (ctx.ipv4Words) {
    rankRowIpv4(ctx.initState, ctx.ipv4Words, row, k, out, outStart, topHi, topLo, topIdx);
    return;
  }
  rowSeedInto(ctx, row, rowSeedWords);
  rowState.set(ctx.initState);
  sipBlocks(rowState, rowSeedWords, 0, 1);
  const { proxyWords, proxyWordStart, proxyBlocks, count } = ctx;
  let filled = 0;
  for (let p = 0; p < count; p++) {
    sipFinish(rowState, proxyWords, proxyWordStart[p]!, proxyBlocks[p]!, scoreOut, 0);
    // Big-endian reading of the little-endian output bytes = byte-swapped halves, swapped.
    const hi = scoreKey(scoreOut[0]!);
    const lo = scoreKey(scoreOut[1]!);
    if (filled === k) {
      const wh = topHi[k - 1]!;
      // Not better than the current worst (ties keep the lower index, already present).
      if (hi > wh || (hi === wh && lo >= topLo[k - 1]!)) continue;
      filled--;
    }
    // Insertion into the sorted prefix; strict comparison keeps earlier (lower) indexes first.
    let j = filled;
    while (j > 0) {
      const ph = topHi[j - 1]!;
      if (ph < hi || (ph === hi && topLo[j - 1]! <= lo)) break;
      topHi[j] = ph;
      topLo[j] = topLo[j - 1]!;
      topIdx[j] = topIdx[j - 1]!;
      j--;
    }
    topHi[j] = hi;
    topLo[j] = lo;
    topIdx[j] = p;
    filled++;
  }
  for (let i = 0; i < k; i++) out[outStart + i] = topIdx[i]!;
}

/** Full rendezvous order of one row, as proxy indexes (inactive proxies included). */
export function rendezvousRowOrder(seed: Uint8Array, addresses: readonly string[], row: number): number[] {
  checkRow(row);
  const ctx = prepareRendezvous(seed, addresses);
  const n = addresses.length;
  const out = new Uint8Array(n);
  rankRow(ctx, row, n, out, 0, new Int32Array(n + 1), new Int32Array(n + 1), new Uint8Array(n + 1));
  return Array.from(out);
}

/** Computes the state-independent per-row order prefix for a proxy list. */
export function computeRendezvousOrder(
  seed: Uint8Array,
  addresses: readonly string[],
  options: RendezvousOptions = {},
): RendezvousOrder {
  const n = addresses.length;
  const ctx = prepareRendezvous(seed, addresses);
  const depth = options.depth === undefined ? Math.min(n, DEFAULT_DEPTH) : Math.min(n, options.depth);
  if (n > 0 && (!Number.isInteger(depth) || depth < 1))
    throw new RangeError(`depth must be >= 1, got ${depth}`);
  const order = new Uint8Array(TABLE_ROWS * depth);
  // WebAssembly when the engine has it (rank.wat, same results); this loop is the reference.
  if (depth > 0 && !rankRowsWasm(ctx, depth, order)) {
    const topHi = new Int32Array(depth + 1);
    const topLo = new Int32Array(depth + 1);
    const topIdx = new Uint8Array(depth + 1);
    for (let row = 0; row < TABLE_ROWS; row++) {
      rankRow(ctx, row, depth, order, row * depth, topHi, topLo, topIdx);
    }
  }
  const result: RendezvousOrder = {
    seed: Uint8Array.from(seed),
    addresses: Object.freeze([...addresses]),
    depth,
    order,
  };
  contexts.set(result, ctx);
  return result;
}

/** The prepared context of an order (recreated if the order was built elsewhere). */
export function rendezvousContext(order: RendezvousOrder): RendezvousContext {
  let ctx = contexts.get(order);
  if (!ctx) {
    ctx = prepareRendezvous(order.seed, order.addresses);
    contexts.set(order, ctx);
  }
  return ctx;
}
