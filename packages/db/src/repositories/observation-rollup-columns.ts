import { brotliDecompressSync } from "node:zlib";
import type { Prisma } from "@prisma/client";
import type { Db } from "../client";
import { minuteOf } from "./observation-codec";
import { decodeRollup, ROLLUP_VERSION, type MinuteRollup, type RateStat } from "./observation-rollup";

/**
 * A host's one-minute rollups over a range as columns of the rate series a chart wants (issue 16's
 * history charts): for a week, 10,080 minutes of ~300 numbers each, of which a chart draws a few
 * dozen series. rollupsOfRange (observation-chunks.ts) builds one object per minute with every
 * series (~0.5 s for a week on the bench); this keeps the packed hours' columns as they are and
 * picks the wanted series only. It reads the packed layout of observation-rollup.ts (packRollups;
 * observation-rollup-columns.test.ts checks both agree).
 */

type Tx = Prisma.TransactionClient | Db;

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

export interface RollupColumns {
  /** Minute starts (ms), ascending, one per stored minute in the range. */
  minutes: number[];
  /** Seconds each minute's rate pairs covered (MinuteRollup.spanS), aligned with `minutes`. */
  spanS: number[];
  /** The wanted rate series, aligned with `minutes` (null where the minute lacks it). */
  rates: Record<string, (RateStat | null)[]>;
  /** Every rate or gauge series name seen in the range (wanted or not), e.g. to list namespaces. */
  names: Set<string>;
}

/** The packed body's parts this reader uses (see observation-rollup.ts PackedBody). */
interface PackedColumns {
  v: number;
  m: number[];
  s: number[];
  r: Record<string, (number | null)[][]>;
  g: Record<string, (number | null)[][]>;
}

/** Columns of minute rollups (any mix of decoded minutes), for rows kept one a minute. */
export function columnsOfRollups(
  points: readonly { minute: Date; rollup: Pick<MinuteRollup, "spanS" | "rates" | "gauges"> }[],
  wanted: (name: string) => boolean,
): RollupColumns {
  const out: RollupColumns = { minutes: [], spanS: [], rates: {}, names: new Set() };
  const sorted = [...points].sort((a, b) => a.minute.getTime() - b.minute.getTime());
  sorted.forEach((p, i) => {
    out.minutes.push(p.minute.getTime());
    out.spanS.push(p.rollup.spanS);
    for (const name of Object.keys(p.rollup.gauges)) out.names.add(name);
    for (const [name, stat] of Object.entries(p.rollup.rates)) {
      out.names.add(name);
      if (!wanted(name)) continue;
      const col = (out.rates[name] ??= new Array<RateStat | null>(sorted.length).fill(null));
      col[i] = stat;
    }
  });
  return out;
}

/** A stored rollup row: one minute, or a packed hour (span_minutes 60). */
export interface RollupRow {
  minute: Date;
  span_minutes: number;
  data: Uint8Array;
}

/**
 * Columns of the minutes in [from's minute, to] of rollup rows ordered by minute (as
 * rollupColumnsOfRange reads them): packed hours are read column by column, never per minute.
 */
export function columnsOfRollupRows(
  rows: readonly RollupRow[],
  from: Date,
  to: Date,
  wanted: (name: string) => boolean,
): RollupColumns {
  const first = minuteOf(from).getTime();
  const last = to.getTime();
  // Per row, the minutes it adds and how to read a wanted series' stat of its i-th minute.
  const parts: {
    minutes: number[];
    spanS: number[];
    rates: Record<string, (i: number) => RateStat | null>;
  }[] = [];
  const names = new Set<string>();
  for (const r of rows) {
    const start = new Date(r.minute).getTime();
    if (r.span_minutes > 1) {
      const b = JSON.parse(brotliDecompressSync(r.data).toString("utf8")) as PackedColumns;
      if (b.v !== ROLLUP_VERSION)
        throw new Error(`observation rollup: version ${b.v} is not ${ROLLUP_VERSION}`);
      const idx: number[] = [];
      b.m.forEach((offset, i) => {
        const t = start + offset * MINUTE_MS;
        if (t >= first && t <= last) idx.push(i);
      });
      if (idx.length === 0) continue;
      for (const name of Object.keys(b.r)) names.add(name);
      for (const name of Object.keys(b.g)) names.add(name);
      const rates: Record<string, (i: number) => RateStat | null> = {};
      for (const [name, cols] of Object.entries(b.r)) {
        if (!wanted(name)) continue;
        rates[name] = (i) => {
          const j = idx[i]!;
          return cols[0]![j] === null ? null : (cols.map((c) => c[j]) as RateStat);
        };
      }
      parts.push({
        minutes: idx.map((i) => start + b.m[i]! * MINUTE_MS),
        spanS: idx.map((i) => b.s[i]!),
        rates,
      });
    } else if (start >= first && start <= last) {
      const c = columnsOfRollups([{ minute: new Date(start), rollup: decodeRollup(r.data) }], wanted);
      for (const n of c.names) names.add(n);
      const rates: Record<string, (i: number) => RateStat | null> = {};
      for (const [name, col] of Object.entries(c.rates)) rates[name] = () => col[0] ?? null;
      parts.push({ minutes: c.minutes, spanS: c.spanS, rates });
    }
  }
  // Rows come ordered by minute and never overlap (a minute is in one row), so the parts concatenate.
  const out: RollupColumns = { minutes: [], spanS: [], rates: {}, names };
  const total = parts.reduce((a, p) => a + p.minutes.length, 0);
  let at = 0;
  for (const p of parts) {
    for (const [name, get] of Object.entries(p.rates)) {
      const col = (out.rates[name] ??= new Array<RateStat | null>(total).fill(null));
      for (let i = 0; i < p.minutes.length; i++) col[at + i] = get(i);
    }
    out.minutes.push(...p.minutes);
    out.spanS.push(...p.spanS);
    at += p.minutes.length;
  }
  return out;
}

/** The host's rollups of minutes in [from, to] as columns of the `wanted` rate series. */
export async function rollupColumnsOfRange(
  tx: Tx,
  hostId: string,
  from: Date,
  to: Date,
  wanted: (name: string) => boolean,
): Promise<RollupColumns> {
  const first = minuteOf(from).getTime();
  // A packed hour that starts up to 59 min before `from` still holds minutes of the range.
  const rows = await tx.$queryRaw<RollupRow[]>`
    SELECT minute, span_minutes, data FROM observation_rollups
     WHERE host_id = ${hostId}
       AND minute >= ${new Date(first - HOUR_MS + MINUTE_MS).toISOString()}::timestamptz
       AND minute <= ${to.toISOString()}::timestamptz
     ORDER BY minute`;
  return columnsOfRollupRows(rows, from, to, wanted);
}
