import { promisify } from "node:util";
import { brotliCompress, brotliCompressSync, brotliDecompressSync, constants as zlib } from "node:zlib";

/**
 * The chunk codec: one host-minute of observation samples in one small buffer, decoded exactly
 * (deep-equal JSON, the same numbers and strings) — the 1 s tier after the raw rows.
 *
 * Layout: byte 0 is CHUNK_CODEC_VERSION, the rest is brotli(JSON body), the body being
 *
 *   { s: string[], r: { s: shape, t: number[], k: values, d: (0 | values)[] }[] }
 *
 * - A shape is the sample's JSON with every leaf (number, string, boolean, null) replaced by 0:
 *   the structure (keys, array lengths) that consecutive samples of a host nearly always share.
 *   A sample's values are its leaves in depth-first order. `s` lists the minute's shapes.
 * - A run (`r`) is consecutive samples of one shape: `t` their times (the first as ms after the
 *   minute, the others as ms after the previous sample), `k` the first one's values verbatim, and
 *   `d` the others' values column by column (d[j] = leaf j of every later sample of the run; 0 for
 *   a column of zeros), each given against the same leaf of the sample before it: a leaf that is an
 *   integer in both is the difference (absolute counters rising a steady amount a second give
 *   small numbers), any other unchanged leaf is 0, and a changed leaf that cannot be a difference
 *   is given verbatim, wrapped in a one-element array. Columns put a counter's differences side by
 *   side (a fifth smaller after brotli than sample by sample, measured on the storage bench), and
 *   a leaf that never changes in the run costs one character.
 * - A string equal to its sample's time in ISO form (the Observation's sampledAt) is `{}`.
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

/** brotli options of the chunk and rollup codecs (text mode, BROTLI_QUALITY). */
export function brotliOptions(bytes: number) {
  return {
    params: {
      [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
      [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlib.BROTLI_PARAM_SIZE_HINT]: bytes,
    },
  };
}

const brotliCompressAsync = promisify(brotliCompress);

/**
 * brotli on libuv's thread pool, off the event loop: the console's compactor compresses ~1,000
 * chunks and rollups a minute at 1,000 hosts, and doing it synchronously took that time from
 * ingest requests.
 */
export function compressAsync(body: Buffer): Promise<Buffer> {
  return brotliCompressAsync(body, brotliOptions(body.length));
}

export type JsonLeaf = number | string | boolean | null;
export type JsonValue = JsonLeaf | JsonValue[] | { [key: string]: JsonValue };

export interface TimedSample {
  sampledAt: Date;
  payload: JsonValue;
}

type Emitted = number | string | boolean | null | [JsonLeaf] | Record<string, never>;
interface Run {
  s: number;
  t: number[];
  k: Emitted[];
  d: (0 | Emitted[])[];
}

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

/** The uncompressed body of a chunk (chunkBody + CHUNK_CODEC_VERSION + brotli = encodeChunk). */
function chunkBody(minute: Date, samples: readonly TimedSample[]): Buffer {
  const sorted = [...samples].sort((a, b) => a.sampledAt.getTime() - b.sampledAt.getTime());
  const shapes: string[] = [];
  const shapeIndex = new Map<string, number>();
  const runs: Run[] = [];
  let run: Run | null = null;
  let prev: JsonLeaf[] = [];
  let prevT = minute.getTime();
  for (const sample of sorted) {
    const shapeText = JSON.stringify(shapeOf(sample.payload));
    let shape = shapeIndex.get(shapeText);
    if (shape === undefined) {
      shape = shapes.push(shapeText) - 1;
      shapeIndex.set(shapeText, shape);
    }
    const t = sample.sampledAt.getTime();
    const iso = sample.sampledAt.toISOString();
    const leaves = leavesOf(sample.payload);
    if (run === null || run.s !== shape) {
      run = { s: shape, t: [t - prevT], k: leaves.map((c) => (c === iso ? {} : c)), d: leaves.map(() => []) };
      runs.push(run);
    } else {
      run.t.push(t - prevT);
      leaves.forEach((c, j) => {
        const p = prev[j];
        const column = run!.d[j] as Emitted[];
        if (c === iso) column.push({});
        else if (isInt(p) && isInt(c) && isInt(c - p)) column.push(c - p);
        else column.push(c === p ? 0 : [c]);
      });
    }
    prev = leaves;
    prevT = t;
  }
  for (const r of runs)
    r.d = r.t.length === 1 ? [] : r.d.map((c) => (c !== 0 && c.every((x) => x === 0) ? 0 : c));
  return Buffer.from(JSON.stringify({ s: shapes, r: runs }));
}

/** Encode samples of one minute (any order; times must be unique) relative to `minute`. */
export function encodeChunk(minute: Date, samples: readonly TimedSample[]): Buffer {
  const body = chunkBody(minute, samples);
  return Buffer.concat([
    Buffer.from([CHUNK_CODEC_VERSION]),
    brotliCompressSync(body, brotliOptions(body.length)),
  ]);
}

/** encodeChunk, compressing off the event loop (compressAsync). */
export async function encodeChunkAsync(minute: Date, samples: readonly TimedSample[]): Promise<Buffer> {
  const packed = await compressAsync(chunkBody(minute, samples));
  return Buffer.concat([Buffer.from([CHUNK_CODEC_VERSION]), packed]);
}

/** The samples of an encoded chunk, oldest first. */
export function decodeChunk(minute: Date, data: Uint8Array): TimedSample[] {
  if (data[0] !== CHUNK_CODEC_VERSION) {
    throw new Error(`observation chunk: codec version ${data[0]} is not ${CHUNK_CODEC_VERSION}`);
  }
  const body = JSON.parse(brotliDecompressSync(data.subarray(1)).toString("utf8")) as {
    s: string[];
    r: Run[];
  };
  const shapes = body.s.map((text) => JSON.parse(text) as JsonValue);
  const out: TimedSample[] = [];
  let t = minute.getTime();
  for (const run of body.r) {
    let prev: JsonLeaf[] = [];
    run.t.forEach((dt, i) => {
      t += dt;
      const sampledAt = new Date(t);
      const iso = sampledAt.toISOString();
      const isMarker = (e: Emitted) => e !== null && typeof e === "object" && !Array.isArray(e);
      const leaves =
        i === 0
          ? run.k.map((e) => (isMarker(e) ? iso : (e as JsonLeaf)))
          : prev.map((p, j): JsonLeaf => {
              const column = run.d[j]!;
              const e = column === 0 ? 0 : column[i - 1]!;
              if (isMarker(e)) return iso;
              if (Array.isArray(e)) return e[0];
              return isInt(p) ? p + (e as number) : p;
            });
      out.push({ sampledAt, payload: fill(shapes[run.s]!, leaves, { i: 0 }) });
      prev = leaves;
    });
  }
  return out;
}

/** Start of the UTC minute `t` falls in. */
export function minuteOf(t: Date): Date {
  return new Date(Math.floor(t.getTime() / 60_000) * 60_000);
}
