/**
 * A pool's table versions over the REST API: list them with what each change did to the pool's
 * connections, and print one version's change report (issue 26: every change reports).
 */
import { type ChangeReport, type TableVersionSummary } from "@tide/contracts";
import { UsageError, type Command } from "../../cli-io";
import { apiCommand, stringOption } from "../../api/command";
import { type ApiClient } from "../../api/client";
import { poolId } from "../../api/resolve";
import { columns } from "../../table-files";

const G = "version";

/** The one-word outcome of a report, as the console's badge says it. */
export function outcome(r: ChangeReport | undefined): string {
  if (!r) return "-";
  if (r.status !== "done" || !r.report) return r.status;
  const b = r.report;
  if (b.verdict === "none_broken") return "0 broken";
  if (b.verdict === "broken") return `${b.broken ?? `at least ${b.flows.lastResort}`} broken`;
  return "unknown";
}

const hhmmss = (iso: string | null) => (iso ? iso.slice(11, 19) : "-");

/** What a person reads of a report. */
export function reportText(r: ChangeReport): string {
  const lines = [`v${r.version} (${r.tableVersionId}): ${r.status}, opened ${r.openedAt}`];
  const p = r.predicted;
  if (p) {
    lines.push(
      `predicted: ${p.broken.count ?? "unknown"} broken, ${
        p.viaSecondChance.count === null ? "unknown" : Math.round(p.viaSecondChance.count)
      } by second chance`,
    );
  }
  const b = r.report;
  if (!b) return `${lines.join("\n")}\n`;
  const headline =
    b.verdict === "none_broken"
      ? "0 connections broken"
      : b.verdict === "broken"
        ? `${b.broken ?? `at least ${b.flows.lastResort}`} connections broken`
        : "not known: " +
          b.proxies
            .filter((x) => !x.reported)
            .map((x) => `${x.hostname} (${x.reason})`)
            .join(", ");
  lines.push(headline, `window: ${b.windowStart} -> ${b.windowEnd} (${b.ended})`);
  const at = b.atLeast ? "at least " : "";
  lines.push(
    `flows: ${at}${b.flows.secondChance} second chance, ${at}${b.flows.alternateHash} by the old hash fields, ` +
      `${at}${b.flows.lastResort} last resort (broken)`,
  );
  let text = `${lines.join("\n")}\n\n`;
  text += columns([
    ["director", "served at"],
    ...b.directors.map((d) => [d.hostname, d.servedAt ?? "not served"]),
  ]);
  text +=
    "\n" +
    columns([
      ["proxy", "reported", "2nd chance", "alt hash", "broken", "packets 2nd/alt/last"],
      ...b.proxies.map((x) => [
        x.hostname,
        x.reported ? "yes" : `no: ${x.reason}`,
        String(x.flows.secondChance),
        String(x.flows.alternateHash),
        String(x.flows.lastResort),
        x.packets ? `${x.packets.secondChance}/${x.packets.alternateHash}/${x.packets.lastResort}` : "-",
      ]),
    ]);
  for (const [kind, label] of [
    ["lastResort", "broken (last resort)"],
    ["alternateHash", "kept by the old hash fields"],
    ["secondChance", "second chance"],
  ] as const) {
    const listed = b.listed[kind];
    if (listed.length === 0) continue;
    text += `\n${label}, most recent first:\n`;
    text += columns([
      ["client", "vip", "proxy", "packets", "last"],
      ...listed.map((f) => [
        `${f.clientAddress}:${f.clientPort}`,
        `${f.address}:${f.port}`,
        f.hostname,
        String(f.packets),
        hhmmss(f.lastAt),
      ]),
    ]);
  }
  return text;
}

/** The version id for "v12", "12" or "tv_…" of a pool; the newest without one. */
async function versionOf(api: ApiClient, pool: string, ref: string | undefined): Promise<string> {
  if (ref?.startsWith("tv_")) return ref;
  const page = await api.request<{ items: TableVersionSummary[] }>("GET", `/pools/${pool}/tables?limit=200`);
  if (ref === undefined) {
    const newest = page.items[0];
    if (!newest) throw new UsageError("the pool has no table version yet");
    return newest.id;
  }
  const n = Number(ref.replace(/^v/, ""));
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`version: "${ref}" is not v<N>, <N> or tv_…`);
  const found = page.items.find((v) => v.version === n);
  if (!found) throw new UsageError(`version: the pool has no v${n} among its 200 newest versions`);
  return found.id;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const versionCommands: Command[] = [
  apiCommand(G, {
    name: "list",
    args: ["<pool>"],
    async run({ api, args }) {
      const pool = await poolId(api, args[0]!);
      const page = await api.request<{ items: TableVersionSummary[] }>(
        "GET",
        `/pools/${pool}/tables?limit=50`,
      );
      const reports = await Promise.all(
        page.items.map((v) =>
          api.request<ChangeReport>("GET", `/tables/${v.id}/report`).catch(() => undefined),
        ),
      );
      const text = columns([
        ["version", "connections", "cause", "actor", "reason", "time (UTC)"],
        ...page.items.map((v, i) => [
          `v${v.version}`,
          outcome(reports[i]),
          v.cause,
          v.actor,
          v.reason || "-",
          v.createdAt.slice(0, 19).replace("T", " "),
        ]),
      ]);
      return { reply: page.items.map((v, i) => ({ ...v, changeReport: reports[i] ?? null })), text };
    },
  }),
  apiCommand(G, {
    name: "report",
    args: ["<pool>", "<version>?"],
    options: { wait: { type: "string" } },
    optionHelp: [
      "  --wait SECONDS  wait up to SECONDS for the report to be written (measured after the change:",
      "                  its directors serve it, then 20 s; at most about 2 min 15 s)",
    ],
    description:
      "What the change to a table version did to the pool's connections: which directors served it and\n" +
      "when, the flows that reached their proxy by a second chance or the old hash fields, and the\n" +
      "connections broken, beside the change's prediction. <version>: v<N>, <N> or tv_…; default the newest.",
    async run({ api, args, values }) {
      const pool = await poolId(api, args[0]!);
      const id = await versionOf(api, pool, args[1]);
      const waitText = stringOption(values, "wait");
      const waitS = waitText === undefined ? 0 : Number(waitText);
      if (!Number.isFinite(waitS) || waitS < 0 || waitS > 3600)
        throw new UsageError("--wait: a number of seconds, 0..3600");
      const deadline = Date.now() + waitS * 1000;
      let r = await api.request<ChangeReport>("GET", `/tables/${id}/report`);
      while (r.status !== "done" && Date.now() < deadline) {
        await sleep(Math.min(2000, Math.max(0, deadline - Date.now())));
        r = await api.request<ChangeReport>("GET", `/tables/${id}/report`);
      }
      return { reply: r, text: reportText(r) };
    },
  }),
];
