import type { ChangeReport, ChangeReportBody, ChangeReportFlow, FlowKind } from "@tide/contracts";
import { shortHost } from "../../components/short-host";

/**
 * A change report in words (issue 26 item 2): the compact badge of a version row or an audit event,
 * the panel's headline, and the figures beside the preview's prediction. Pure; the console shows
 * times in UTC like the rest of its pages.
 */

const n = (v: number) => v.toLocaleString("en-US");
const plural = (count: number, one: string, many: string) => `${n(count)} ${count === 1 ? one : many}`;

/** "09:51:02" of an ISO instant, UTC (the lists' "Time (UTC)" column). */
export function clock(iso: string): string {
  return iso.slice(11, 19);
}

/** The order the kinds are shown in, and their names in the console. */
export const FLOW_KINDS = [
  "secondChance",
  "alternateHash",
  "lastResort",
] as const satisfies readonly FlowKind[];
export const FLOW_KIND_LABEL: Record<FlowKind, string> = {
  secondChance: "second chance",
  alternateHash: "alternate hash",
  lastResort: "last resort (broken)",
};

/**
 * How many connections the change broke: `count` null when not known; `atLeast` when it is a floor
 * (a capped flow reading, or a proxy that did not report while others saw resets).
 */
export function brokenOf(body: ChangeReportBody): { count: number | null; atLeast: boolean } {
  if (body.verdict === "none_broken") return { count: 0, atLeast: false };
  if (body.verdict === "broken")
    return { count: body.broken ?? body.flows.lastResort, atLeast: body.broken === null || body.atLeast };
  return { count: null, atLeast: false };
}

/**
 * Why the verdict is unknown, one line per cause, the proxies with the same cause together
 * ("proxy-01, proxy-02: no flows reading after the window").
 */
export function unknownReasons(body: ChangeReportBody): string[] {
  const byReason = new Map<string, string[]>();
  for (const p of body.proxies) {
    if (p.reported) continue;
    const reason = p.reason ?? "did not report";
    byReason.set(reason, [...(byReason.get(reason) ?? []), shortHost(p.hostname)]);
  }
  if (byReason.size > 0) return [...byReason].map(([reason, hosts]) => `${hosts.join(", ")}: ${reason}`);
  if (body.atLeast) return ["a proxy's flow readings were capped during the window, so 0 is not certain"];
  return ["the report gives no reason"];
}

export type BadgeTone = "none" | "pending" | "ok" | "broken" | "unknown";

/** The compact badge: a version row's "Connections" cell, an audit event's version link. */
export function badgeOf(report: ChangeReport | null): { text: string; tone: BadgeTone; title: string } {
  if (report === null)
    return { text: "—", tone: "none", title: "No change report: written before change reports existed" };
  if (report.status === "measuring")
    return {
      text: `measuring since ${clock(report.openedAt)}`,
      tone: "pending",
      title:
        `Measuring what v${report.version} does to established connections since ${clock(report.openedAt)} UTC; ` +
        "the window ends once its directors serve it and a settle time has passed",
    };
  if (report.status === "closing" || report.report === null)
    return {
      text: "closing…",
      tone: "pending",
      title:
        `The window ended${report.closedAt ? ` at ${clock(report.closedAt)} UTC` : ""}; ` +
        "waiting for the proxies' readings to cover it",
    };
  const body = report.report;
  const broken = brokenOf(body);
  if (broken.count === null)
    return { text: "unknown", tone: "unknown", title: `Not known: ${unknownReasons(body).join("; ")}` };
  const text = `${broken.atLeast ? "at least " : ""}${n(broken.count)} broken`;
  return { text, tone: broken.count === 0 ? "ok" : "broken", title: headlineOf(report).text };
}

/**
 * The panel's headline: "0 connections broken", "3 connections broken", "at least 3 connections
 * broken", "Not known: <reasons>", or where the report stands while it is not written yet.
 * `verdict` is the report's verdict, or its status while not done.
 */
export function headlineOf(report: ChangeReport): { text: string; verdict: string } {
  if (report.status === "measuring")
    return { text: `Measuring since ${clock(report.openedAt)} UTC`, verdict: "measuring" };
  if (report.status === "closing" || report.report === null)
    return {
      text:
        `Window ended${report.closedAt ? ` at ${clock(report.closedAt)} UTC` : ""}; ` +
        "waiting for the proxies' readings to cover it",
      verdict: "closing",
    };
  const body = report.report;
  const broken = brokenOf(body);
  if (broken.count === null)
    return { text: `Not known: ${unknownReasons(body).join("; ")}`, verdict: body.verdict };
  return {
    text: `${broken.atLeast ? "at least " : ""}${plural(broken.count, "connection", "connections")} broken`,
    verdict: body.verdict,
  };
}

/** A figure of the preview: "3", "~120" (an estimate), "unknown". */
function predictedFigure(f: { count: number | null; exact: boolean }): string {
  return f.count === null ? "unknown" : `${f.exact ? "" : "~"}${n(f.count)}`;
}

/**
 * The preview's prediction beside what was measured, when the change had one:
 * "predicted 3 broken, measured 3"; "predicted ~120 by second chance, measured 118".
 * Predicted figures are established connections; measured ones are flows seen in the window.
 */
export function predictedLines(report: ChangeReport): string[] {
  const p = report.predicted;
  if (p === null) return [];
  const body = report.status === "done" ? report.report : null;
  const atLeast = body?.atLeast ? "at least " : "";
  const broken = body ? brokenOf(body) : null;
  const measuredBroken =
    broken === null
      ? "not measured yet"
      : broken.count === null
        ? "measured: not known"
        : `measured ${broken.atLeast ? "at least " : ""}${n(broken.count)}`;
  const measuredSecond = body ? `measured ${atLeast}${n(body.flows.secondChance)}` : "not measured yet";
  return [
    `predicted ${predictedFigure(p.broken)} broken, ${measuredBroken}`,
    `predicted ${predictedFigure(p.viaSecondChance)} by second chance, ${measuredSecond}`,
  ];
}

/** A count of flows of one kind: "12", "at least 12" when a reading was capped. */
export function flowCount(body: ChangeReportBody, kind: FlowKind): string {
  return `${body.atLeast ? "at least " : ""}${n(body.flows[kind])}`;
}

/** "address:port", with an IPv6 address in brackets. */
export function endpoint(address: string, port: number): string {
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}

/** One named flow: "198.51.100.7:45678 → 192.0.2.10:443 on proxy-01". */
export function flowLine(f: ChangeReportFlow): string {
  return `${endpoint(f.clientAddress, f.clientPort)} → ${endpoint(f.address, f.port)} on ${shortHost(f.hostname)}`;
}

/** A director's line: "director-01: served at 09:51:04" or "director-01: not served". */
export function directorLine(d: ChangeReportBody["directors"][number]): string {
  return `${shortHost(d.hostname)}: ${d.servedAt === null ? "not served" : `served at ${clock(d.servedAt)}`}`;
}

/** Per-kind figures in one line: "second chance 12 · alternate hash 0 · last resort (broken) 0". */
export function perKindLine(v: Record<FlowKind, number>): string {
  return FLOW_KINDS.map((k) => `${FLOW_KIND_LABEL[k]} ${n(v[k])}`).join(" · ");
}

/** The window: "2026-11-28 09:51:02 → 09:51:22 UTC (served by 2/2 directors, then 20 s)". */
export function windowLine(body: ChangeReportBody): string {
  const sameDay = body.windowStart.slice(0, 10) === body.windowEnd.slice(0, 10);
  const end = sameDay ? clock(body.windowEnd) : `${body.windowEnd.slice(0, 10)} ${clock(body.windowEnd)}`;
  return `${body.windowStart.slice(0, 10)} ${clock(body.windowStart)} → ${end} UTC (${body.ended})`;
}
