import {
  CHANGE_REPORT_MAX_LISTED_FLOWS,
  type ChangeReportBody,
  type ChangeReportFlow,
  type FlowKind,
} from "@tide/contracts";
import type { WindowFlow } from "@tide/db";
import { inBind, type BindRange, type HostTraffic } from "../telemetry/proxy-traffic.plan";

/**
 * Change reports (issue 26 item 2), the pure part: when a change's window ends, and what it did to
 * the pool's connections. A window opens with each table version and ends when its directors have
 * served it for SETTLE_MS (established flows moved by it show by then: the lab's streams send every
 * second), when a newer version replaces it, or after MAX_WINDOW_MS. The report is written once
 * every proxy's readings (counters and flows) reach the end, or CATCH_UP_MS after it without them.
 */

/** How long after the last director serves the version the window stays open, ms. */
export const SETTLE_MS = 20_000;
/** The longest window, ms: directors that have not served it by then are named in the report. */
export const MAX_WINDOW_MS = 120_000;
/** How long a closed window waits for the proxies' readings to reach its end, ms. */
export const CATCH_UP_MS = 15_000;

const KINDS = ["secondChance", "alternateHash", "lastResort"] as const satisfies readonly FlowKind[];
type PerKind<T> = Record<FlowKind, T>;
const perKind = <T>(f: (k: FlowKind) => T): PerKind<T> => ({
  secondChance: f("secondChance"),
  alternateHash: f("alternateHash"),
  lastResort: f("lastResort"),
});

/** A proxy host's counters on the pool's VIPs at one reading. */
export interface CounterReading {
  readAt: string;
  packets: PerKind<number>;
}
/** Per proxy host name: its reading at the change; null = none (no traffic, or no per-VIP counters). */
export type Baseline = Record<string, CounterReading | null>;

const inRange = (b: BindRange, address: string, port: number, proto: string) =>
  b.proto === proto && inBind(address, b) && port >= b.portStart && port <= b.portEnd;

/** The host's per-VIP counters summed over the pool's binds; null without per-VIP counters. */
export function readingOf(t: HostTraffic | null, binds: readonly BindRange[]): CounterReading | null {
  if (t === null || !t.vips) return null;
  const packets = perKind(() => 0);
  for (const v of t.vips) {
    if (!binds.some((b) => inRange(b, v.address, v.port, v.proto))) continue;
    packets.secondChance += v.counters.accepted_second_chance;
    packets.alternateHash += v.counters.accepted_alternate_hash;
    packets.lastResort += v.counters.accepted_last_resort;
  }
  return { readAt: t.readAt ?? t.at, packets };
}

export interface WindowDirector {
  directorId: string;
  hostname: string;
  /** When it began serving the version (at the earliest the window's start); null = not serving it. */
  servedAt: Date | null;
}

export type WindowEnd = { end: false } | { end: true; at: Date; why: string };

/** Whether a window opened at `openedAt` has ended by `now`, and when and why. */
export function planWindowEnd(input: {
  openedAt: Date;
  now: Date;
  /** When a newer version of the pool was written; null = none. */
  replacedAt: { at: Date; version: number } | null;
  directors: readonly WindowDirector[];
}): WindowEnd {
  const { openedAt, now, replacedAt, directors } = input;
  if (replacedAt) return { end: true, at: replacedAt.at, why: `v${replacedAt.version} replaced it` };
  const longest = new Date(openedAt.getTime() + MAX_WINDOW_MS);
  const served = directors.filter((d) => d.servedAt !== null);
  if (served.length === directors.length) {
    const last = Math.max(openedAt.getTime(), ...served.map((d) => d.servedAt!.getTime()));
    const at = new Date(Math.min(last + SETTLE_MS, longest.getTime()));
    const why =
      directors.length === 0
        ? `no director serves the pool; measured for ${SETTLE_MS / 1000} s`
        : `served by ${served.length}/${directors.length} director${directors.length === 1 ? "" : "s"}, ` +
          `then ${SETTLE_MS / 1000} s`;
    return now >= at ? { end: true, at, why } : { end: false };
  }
  if (now < longest) return { end: false };
  const missing = directors.filter((d) => d.servedAt === null).map((d) => d.hostname);
  return {
    end: true,
    at: longest,
    why: `longest window (${MAX_WINDOW_MS / 1000} s); not served by ${missing.join(", ")}`,
  };
}

/** A proxy host's state at the report: its counters now and how far its flow readings reach. */
export interface ProxyAtClose {
  proxyId: string | null;
  hostname: string;
  reading: CounterReading | null;
  /** When its agent last reported flows; null = never (an older agent or tide-redirect). */
  flowsReadAt: Date | null;
  /** When a flows reading of it was last capped; null = never. */
  flowsTruncatedAt: Date | null;
}

/** Whether every proxy's readings reach `closedAt` (the report can be written without waiting). */
export function caughtUp(proxies: readonly ProxyAtClose[], closedAt: Date): boolean {
  return proxies.every(
    (p) =>
      p.flowsReadAt !== null &&
      p.flowsReadAt >= closedAt &&
      p.reading !== null &&
      Date.parse(p.reading.readAt) >= closedAt.getTime(),
  );
}

const kindAt = (f: WindowFlow, k: FlowKind) =>
  k === "secondChance" ? f.secondChanceAt : k === "alternateHash" ? f.alternateHashAt : f.lastResortAt;
const kindPackets = (f: WindowFlow, k: FlowKind) =>
  k === "secondChance"
    ? f.secondChancePackets
    : k === "alternateHash"
      ? f.alternateHashPackets
      : f.lastResortPackets;

/** The report of a window, from the readings at its start and now and the flows in it. */
export function buildReport(input: {
  openedAt: Date;
  closedAt: Date;
  why: string;
  baseline: Baseline;
  proxies: readonly ProxyAtClose[];
  directors: readonly WindowDirector[];
  binds: readonly BindRange[];
  flows: readonly WindowFlow[];
}): ChangeReportBody {
  const { openedAt, closedAt, binds } = input;
  const ours = input.flows.filter((f) => binds.some((b) => inRange(b, f.address, f.port, f.proto)));
  const flowsOf = (k: FlowKind, hostname?: string) =>
    ours.filter((f) => kindAt(f, k) !== null && (hostname === undefined || f.hostname === hostname));
  const distinct = (fs: readonly WindowFlow[]) =>
    new Set(fs.map((f) => `${f.proto}|${f.clientAddress}|${f.clientPort}|${f.address}|${f.port}`)).size;

  const proxies = input.proxies.map((p) => {
    const start = input.baseline[p.hostname] ?? null;
    const end = p.reading;
    let reason: string | null = null;
    if (p.flowsReadAt === null) reason = "its agent or tide-redirect does not report flows";
    else if (p.flowsReadAt < closedAt)
      reason = `no flows reading after the window (last ${p.flowsReadAt.toISOString()})`;
    else if (start === null) reason = "no per-VIP counters at the change";
    else if (end === null || Date.parse(end.readAt) < closedAt.getTime())
      reason = "no counters reading after the window";
    let packets: PerKind<number> | null = null;
    if (start !== null && end !== null) {
      const d = perKind((k) => end.packets[k] - start.packets[k]);
      if (KINDS.some((k) => d[k] < 0)) reason ??= "its counters restarted during the window";
      else packets = d;
    }
    return {
      proxyId: p.proxyId,
      hostname: p.hostname,
      reported: reason === null,
      reason,
      packets,
      flows: perKind((k) => distinct(flowsOf(k, p.hostname))),
    };
  });

  const listed = perKind((k) =>
    flowsOf(k)
      .sort((a, b) => kindAt(b, k)!.getTime() - kindAt(a, k)!.getTime())
      .slice(0, CHANGE_REPORT_MAX_LISTED_FLOWS)
      .map((f): ChangeReportFlow => ({
        hostname: f.hostname,
        clientAddress: f.clientAddress,
        clientPort: f.clientPort,
        address: f.address,
        port: f.port,
        packets: kindPackets(f, k),
        lastAt: kindAt(f, k)!.toISOString(),
      })),
  );
  const flows = perKind((k) => distinct(flowsOf(k)));
  const atLeast = input.proxies.some((p) => p.flowsTruncatedAt !== null && p.flowsTruncatedAt >= openedAt);
  const allReported = proxies.every((p) => p.reported);
  // A capped reading may have left out a reset flow: 0 is then not an answer, a count is a floor.
  const broken = allReported && !(atLeast && flows.lastResort === 0) ? flows.lastResort : null;
  return {
    windowStart: openedAt.toISOString(),
    windowEnd: closedAt.toISOString(),
    ended: input.why,
    directors: input.directors.map((d) => ({
      directorId: d.directorId,
      hostname: d.hostname,
      servedAt: d.servedAt !== null && d.servedAt <= closedAt ? d.servedAt.toISOString() : null,
    })),
    proxies,
    flows,
    listed,
    atLeast,
    broken,
    verdict:
      broken === null
        ? flows.lastResort > 0
          ? "broken"
          : "unknown"
        : broken === 0
          ? "none_broken"
          : "broken",
  };
}
