/**
 * SipHash-2-4 (Aumasson & Bernstein), 128-bit key, 64-bit output.
 *
 * The hot path (65,536 rows x N proxies per table build) must not allocate or use BigInt,
 * so the 64-bit state words are kept as pairs of 32-bit halves in locals and the public
 * building blocks work on an 8-word Int32Array state:
 *   [v0lo, v0hi, v1lo, v1hi, v2lo, v2hi, v3lo, v3hi]
 * and on messages pre-split into 64-bit little-endian blocks stored as (lo, hi) word pairs.
 *
 * The digest as a u64 is the little-endian reading of the 8 output bytes, which is
 * lo | hi << 32 of the output words.
 */

/** A prepared key: its two little-endian 64-bit halves as 32-bit words. */
export interface SipKey {
  readonly k0lo: number;
  readonly k0hi: number;
  readonly k1lo: number;
  readonly k1hi: number;
}

/** Digest as 32-bit halves (unsigned). */
export interface SipDigest {
  lo: number;
  hi: number;
}

function readU32le(bytes: Uint8Array, i: number): number {
  return (
    (bytes[i] ?? 0) |
    ((bytes[i + 1] ?? 0) << 8) |
    ((bytes[i + 2] ?? 0) << 16) |
    ((bytes[i + 3] ?? 0) << 24) |
    0
  );
}

/** Prepares a 16-byte key. Throws RangeError for any other length. */
export function sipKey(key: Uint8Array): SipKey {
  if (key.length !== 16) throw new RangeError(`SipHash key must be 16 bytes, got ${key.length}`);
  return {
    k0lo: readU32le(key, 0),
    k0hi: readU32le(key, 4),
    k1lo: readU32le(key, 8),
    k1hi: readU32le(key, 12),
  };
}

/** Writes the initial state for `key` into `state` (length >= 8). */
export function sipInit(key: SipKey, state: Int32Array): void {
  // Constants "somepseudorandomlygeneratedbytes", split into 32-bit halves.
  state[0] = key.k0lo ^ 0x70736575;
  state[1] = key.k0hi ^ 0x736f6d65;
  state[2] = key.k1lo ^ 0x6e646f6d;
  state[3] = key.k1hi ^ 0x646f7261;
  state[4] = key.k0lo ^ 0x6e657261;
  state[5] = key.k0hi ^ 0x6c796765;
  state[6] = key.k1lo ^ 0x79746573;
  state[7] = key.k1hi ^ 0x74656462;
}

/**
 * Splits a message into SipHash blocks (lo, hi word pairs), including the final block that
 * carries the length in its top byte. Returns the number of blocks written at `words[start]`.
 * `words` needs room for 2 * (floor(length / 8) + 1) entries.
 */
export function sipMessageWords(msg: Uint8Array, length: number, words: Int32Array, start: number): number {
  const full = length >>> 3;
  let w = start;
  for (let b = 0; b < full; b++) {
    words[w++] = readU32le(msg, b * 8);
    words[w++] = readU32le(msg, b * 8 + 4);
  }
  // Last block: remaining 0..7 bytes little-endian, length (mod 256) in the most significant byte.
  let lo = 0;
  let hi = (length & 0xff) << 24;
  const tail = full * 8;
  for (let i = 0; i < (length & 7); i++) {
    const byte = msg[tail + i] ?? 0;
    if (i < 4) lo |= byte << (8 * i);
    else hi |= byte << (8 * (i - 4));
  }
  words[w++] = lo | 0;
  words[w++] = hi | 0;
  return full + 1;
}

/**
 * Compresses `nBlocks` message blocks (2 SipRounds each) into `state`, in place.
 * Use for a shared message prefix (e.g. a row seed) before finishing many messages.
 */
export function sipBlocks(state: Int32Array, words: Int32Array, start: number, nBlocks: number): void {
  let v0l = state[0]! | 0;
  let v0h = state[1]! | 0;
  let v1l = state[2]! | 0;
  let v1h = state[3]! | 0;
  let v2l = state[4]! | 0;
  let v2h = state[5]! | 0;
  let v3l = state[6]! | 0;
  let v3h = state[7]! | 0;
  let t = 0;
  let s = 0;
  let w = start;
  for (let b = 0; b < nBlocks; b++) {
    const ml = words[w++]! | 0;
    const mh = words[w++]! | 0;
    v3l ^= ml;
    v3h ^= mh;
    for (let r = 0; r < 2; r++) {
      // v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32)
      s = (v0l + v1l) | 0;
      v0h = (v0h + v1h + (((v0l & v1l) | ((v0l | v1l) & ~s)) >>> 31)) | 0;
      v0l = s;
      t = (v1h << 13) | (v1l >>> 19);
      v1l = ((v1l << 13) | (v1h >>> 19)) ^ v0l;
      v1h = t ^ v0h;
      t = v0l;
      v0l = v0h;
      v0h = t;
      // v2 += v3; v3 = rotl(v3, 16); v3 ^= v2
      s = (v2l + v3l) | 0;
      v2h = (v2h + v3h + (((v2l & v3l) | ((v2l | v3l) & ~s)) >>> 31)) | 0;
      v2l = s;
      t = (v3h << 16) | (v3l >>> 16);
      v3l = ((v3l << 16) | (v3h >>> 16)) ^ v2l;
      v3h = t ^ v2h;
      // v0 += v3; v3 = rotl(v3, 21); v3 ^= v0
      s = (v0l + v3l) | 0;
      v0h = (v0h + v3h + (((v0l & v3l) | ((v0l | v3l) & ~s)) >>> 31)) | 0;
      v0l = s;
      t = (v3h << 21) | (v3l >>> 11);
      v3l = ((v3l << 21) | (v3h >>> 11)) ^ v0l;
      v3h = t ^ v0h;
      // v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32)
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
    v0l ^= ml;
    v0h ^= mh;
  }
  state[0] = v0l;
  state[1] = v0h;
  state[2] = v1l;
  state[3] = v1h;
  state[4] = v2l;
  state[5] = v2h;
  state[6] = v3l;
  state[7] = v3h;
}

/**
 * Finishes a hash without modifying `state`: compresses `nBlocks` blocks (the last one must be
 * the length block from sipMessageWords), then the 4 finalization SipRounds.
 * Writes the digest as (lo, hi) int32 words to out[outIndex], out[outIndex + 1].
 */
export function sipFinish(
  state: Int32Array,
  words: Int32Array,
  start: number,
  nBlocks: number,
  out: Int32Array | Uint32Array,
  outIndex: number,
): void {
  let v0l = state[0]! | 0;
  let v0h = state[1]! | 0;
  let v1l = state[2]! | 0;
  let v1h = state[3]! | 0;
  let v2l = state[4]! | 0;
  let v2h = state[5]! | 0;
  let v3l = state[6]! | 0;
  let v3h = state[7]! | 0;
  let t = 0;
  let s = 0;
  let w = start;
  let ml = 0;
  let mh = 0;
  // Rounds are counted per block: 2 for each message block, then 4 after v2 ^= 0xff.
  const total = nBlocks * 2 + 4;
  for (let r = 0; r < total; r++) {
    if ((r & 1) === 0 && r < nBlocks * 2) {
      if (r > 0) {
        v0l ^= ml;
        v0h ^= mh;
      }
      ml = words[w++]! | 0;
      mh = words[w++]! | 0;
      v3l ^= ml;
      v3h ^= mh;
    } else if (r === nBlocks * 2) {
      v0l ^= ml;
      v0h ^= mh;
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
  out[outIndex] = v0l ^ v1l ^ v2l ^ v3l;
  out[outIndex + 1] = v0h ^ v1h ^ v2h ^ v3h;
}

const scratchState = new Int32Array(8);
const scratchOut = new Int32Array(2);

/** Digest of `msg` under a prepared key, as unsigned 32-bit halves. Allocates only the message words. */
export function siphash24Digest(key: SipKey, msg: Uint8Array): SipDigest {
  const words = new Int32Array(2 * ((msg.length >>> 3) + 1));
  const n = sipMessageWords(msg, msg.length, words, 0);
  sipInit(key, scratchState);
  sipFinish(scratchState, words, 0, n, scratchOut, 0);
  return { lo: scratchOut[0]! >>> 0, hi: scratchOut[1]! >>> 0 };
}

/** The 8 output bytes (the standard SipHash byte order: little-endian u64). Not for hot paths. */
export function siphash24Bytes(key: Uint8Array, msg: Uint8Array): Uint8Array {
  const d = siphash24Digest(sipKey(key), msg);
  const out = new Uint8Array(8);
  const view = new DataView(out.buffer);
  view.setUint32(0, d.lo, true);
  view.setUint32(4, d.hi, true);
  return out;
}

/** The digest as an unsigned 64-bit BigInt (little-endian reading of the output). Not for hot paths. */
export function siphash24(key: Uint8Array, msg: Uint8Array): bigint {
  const d = siphash24Digest(sipKey(key), msg);
  return (BigInt(d.hi) << 32n) | BigInt(d.lo);
}
