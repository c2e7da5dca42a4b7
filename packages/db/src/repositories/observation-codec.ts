import { brotliCompressSync, brotliDecompressSync, constants as zlib } from "node:zlib";

/**
 * The chunk codec: one host-minute of observation samples in one small buffer, decoded exactly
 * (deep-equal JSON, the same numbers and strings) — the 1 s tier after the raw rows.
 *
 * Layout: byte 0 is CHUNK_CODEC_VERSION, the rest is brotli(JSON body), the body being
 *
 *   { s: string[], f: [offsetMs, shapeIndex, values][] }
 *
 * - A shape is the sample's JSON with every leaf (number, string, boolean, null) replaced by 0:
 *   the structure (keys, array lengths) that consecutive samples of a host nearly always share.
 *   `values` are the leaves in depth-first order.
 * - A frame with the same shape as the frame before it holds deltas: a leaf that is an integer in
 *   both is their difference (absolute counters rising a steady amount a second give the same small
 *   numbers frame after frame, which brotli stores in a few bytes); any other unchanged leaf is 0;
 *   a changed leaf that cannot be a difference is given verbatim, wrapped in a one-element array.
 *   Any other frame (the first, or after a shape change) holds its values verbatim.
 * - In either kind of frame a string equal to the frame's own time in ISO form (the Observation's
 *   sampledAt) is `{}`.
 * Arrays and objects never occur as leaves (empty ones belong to the shape), so the two markers
 * are unambiguous.
 */

/** First byte of every encoded chunk. */
export const CHUNK_CODEC_VERSION = 1;

/**
 * brotli quality 5 of 11. Measured on a minute of the storage bench's samples (41 kB of frames,
 * e2e/bench/telemetry-storage.bench.ts): q5 gives 8.9 kB in ~1 ms, q9 8.7 kB in ~30 ms, q11 7.3 kB
 * in ~200 ms; at 1,000 host-minutes a minute only q5 leaves the console's CPU to ingest.
 */
const BROTLI_QUALITY = 5;

export type JsonLeaf = number | string | boolean | null;
export type JsonValue = JsonLeaf | JsonValue[] | { [key: string]: JsonValue };

export interface TimedSample {
  sampledAt: Date;
  payload: JsonValue;
}

type Emitted = number | string | boolean | null | [JsonLeaf] | Record<string, never>;
type Frame = [offsetMs: number, shape: number, values: Emitted[]];

function shapeOf(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(shapeOf);
  if (v !== null && typeof v === "object") {
    const out: Record<string, JsonValue> = {};
    for (const k of Object.keys(v)) out[k] = shapeOf(v[k]!);
    return out;
  }
  return 0;
}

function leavesOf(v: JsonValue, out: JsonLeaf[] = []): JsonLeaf[] {
  if (Array.isArray(v)) for (const x of v) leavesOf(x, out);
  else if (v !== null && typeof v === "object") for (const k of Object.keys(v)) leavesOf(v[k]!, out);
  else out.push(v);
  return out;
}

/** The shape filled with `leaves` in depth-first order (the inverse of shapeOf + leavesOf). */
function fill(shape: JsonValue, leaves: JsonLeaf[], at: { i: number }): JsonValue {
  if (Array.isArray(shape)) return shape.map((s) => fill(s, leaves, at));
  if (shape !== null && typeof shape === "object") {
    const out: Record<string, JsonValue> = {};
    for (const k of Object.keys(shape)) out[k] = fill(shape[k]!, leaves, at);
    return out;
  }
  return leaves[at.i++]!;
}

const isInt = (x: unknown): x is number => Number.isSafeInteger(x);

/** Encode samples of one minute (any order; times must be unique) relative to `minute`. */
export function encodeChunk(minute: Date, samples: readonly TimedSample[]): Buffer {
  const sorted = [...samples].sort((a, b) => a.sampledAt.getTime() - b.sampledAt.getTime());
  const shapes: string[] = [];
  const shapeIndex = new Map<string, number>();
  const frames: Frame[] = [];
  let prevShape = -1;
  let prev: JsonLeaf[] = [];
  for (const s of sorted) {
    const shapeText = JSON.stringify(shapeOf(s.payload));
    let shape = shapeIndex.get(shapeText);
    if (shape === undefined) {
      shape = shapes.push(shapeText) - 1;
      shapeIndex.set(shapeText, shape);
    }
    const iso = s.sampledAt.toISOString();
    const leaves = leavesOf(s.payload);
    const delta = shape === prevShape;
    const values = leaves.map((c, j): Emitted => {
      if (c === iso) return {};
      if (!delta) return c;
      const p = prev[j];
      if (isInt(p) && isInt(c) && isInt(c - p)) return c - p;
      if (c === p) return 0;
      return [c];
    });
    frames.push([s.sampledAt.getTime() - minute.getTime(), shape, values]);
    prevShape = shape;
    prev = leaves;
  }
  const body = Buffer.from(JSON.stringify({ s: shapes, f: frames }));
  const packed = brotliCompressSync(body, {
    params: {
      [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
      [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlib.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  });
  return Buffer.concat([Buffer.from([CHUNK_CODEC_VERSION]), packed]);
}

/** The samples of an encoded chunk, oldest first. */
export function decodeChunk(minute: Date, data: Uint8Array): TimedSample[] {
  if (data[0] !== CHUNK_CODEC_VERSION) {
    throw new Error(`observation chunk: codec version ${data[0]} is not ${CHUNK_CODEC_VERSION}`);
  }
  const body = JSON.parse(brotliDecompressSync(data.subarray(1)).toString("utf8")) as {
    s: string[];
    f: Frame[];
  };
  const shapes = body.s.map((t) => JSON.parse(t) as JsonValue);
  const out: TimedSample[] = [];
  let prevShape = -1;
  let prev: JsonLeaf[] = [];
  for (const [offsetMs, shape, values] of body.f) {
    const sampledAt = new Date(minute.getTime() + offsetMs);
    const iso = sampledAt.toISOString();
    const delta = shape === prevShape;
    const leaves = values.map((e, j): JsonLeaf => {
      if (e !== null && typeof e === "object" && !Array.isArray(e)) return iso;
      if (!delta) return e as JsonLeaf;
      if (Array.isArray(e)) return e[0];
      const p = prev[j]!;
      return isInt(p) ? p + (e as number) : p;
    });
    out.push({ sampledAt, payload: fill(shapes[shape]!, leaves, { i: 0 }) });
    prevShape = shape;
    prev = leaves;
  }
  return out;
}

/** Start of the UTC minute `t` falls in. */
export function minuteOf(t: Date): Date {
  return new Date(Math.floor(t.getTime() / 60_000) * 60_000);
}
