/** Proxies over the REST API: add, remove, and the five drain/fill state machine actions. */
import { type Command } from "../../cli-io";
import { apiCommand, stringOption } from "../../api/command";
import { commandSummary } from "../listing";
import { poolId, proxyId } from "../../api/resolve";
import { type ProxyReply, type TableVersionReply } from "../../api/replies";

type ProxyAction = "drain" | "deactivate" | "fill" | "activate" | "abort";

const G = "proxy";

const proxyLine = (p: ProxyReply) =>
  `${p.hostname} ${p.address} (${p.id}): ${p.state}, ${p.health.healthy ? "healthy" : "unhealthy"}`;
const versionLine = (v: TableVersionReply | null) =>
  v ? `table version v${v.version} written` : "no table version written";

const reasonOption = { reason: { type: "string" as const } };
const reasonHelp = ["  --reason TEXT   why (audit log and table version)"];
const withReason = (path: string, reason: string | undefined) =>
  reason === undefined ? path : `${path}?reason=${encodeURIComponent(reason)}`;

/**
 * drain (active -> draining), deactivate (draining -> inactive), fill (inactive -> filling),
 * activate (filling -> active), abort (draining -> active, filling -> inactive): the API's names.
 */
function action(name: ProxyAction): Command {
  const summary = commandSummary(G, name);
  return apiCommand(G, {
    name,
    args: ["<proxy>"],
    options: reasonOption,
    optionHelp: reasonHelp,
    description: `${summary[0]!.toUpperCase()}${summary.slice(1)}. <proxy>: host name, address or prx_… id.`,
    async run({ api, args, values }) {
      const id = await proxyId(api, args[0]!);
      const reason = stringOption(values, "reason");
      const r = await api.request<{ proxy: ProxyReply; tableVersion: TableVersionReply | null }>(
        "POST",
        `/proxies/${id}/${name}`,
        reason === undefined ? {} : { reason },
      );
      // null: the last proxy of a pool no director serves left the rotation (nothing to build).
      const version = r.tableVersion ? versionLine(r.tableVersion) : "no table version (none in rotation)";
      return { reply: r, text: `${proxyLine(r.proxy)}; ${version}\n` };
    },
  });
}

export const proxyCommands: Command[] = [
  apiCommand(G, {
    name: "add",
    args: ["<pool>", "<address>", "<hostname>"],
    async run({ api, args }) {
      const pool = await poolId(api, args[0]!);
      const p = await api.request<ProxyReply & { tableVersion?: TableVersionReply | null }>(
        "POST",
        `/pools/${pool}/proxies`,
        { address: args[1], hostname: args[2] },
      );
      return {
        reply: p,
        text: `added ${proxyLine(p)}${p.tableVersion ? `; ${versionLine(p.tableVersion)}` : ""}\n`,
      };
    },
  }),
  apiCommand(G, {
    name: "remove",
    args: ["<proxy>"],
    options: reasonOption,
    optionHelp: reasonHelp,
    async run({ api, args, values }) {
      const id = await proxyId(api, args[0]!);
      const r = await api.request<{ removed: ProxyReply; tableVersion?: TableVersionReply | null }>(
        "DELETE",
        withReason(`/proxies/${id}`, stringOption(values, "reason")),
      );
      return {
        reply: r,
        text: `removed ${r.removed.hostname} ${r.removed.address} (${r.removed.id})${r.tableVersion ? `; ${versionLine(r.tableVersion)}` : ""}\n`,
      };
    },
  }),
  action("drain"),
  action("deactivate"),
  action("fill"),
  action("activate"),
  action("abort"),
];
