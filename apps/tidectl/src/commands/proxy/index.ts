/** Proxies over the REST API: add, remove, and the five drain/fill state machine actions. */
import { type Command, type CommandGroup } from "../../cli-io";
import { apiCommand, stringOption } from "../../api/command";
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
function action(name: ProxyAction, summary: string): Command {
  return apiCommand(G, {
    name,
    summary,
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

export const proxyGroup: CommandGroup = {
  name: G,
  summary: "proxies over the REST API (host names, addresses or prx_… ids)",
  commands: [
    apiCommand(G, {
      name: "add",
      summary: "add a proxy to a pool (active while the pool carries no traffic, else inactive: fill it)",
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
      summary: "remove an inactive proxy from its pool",
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
    action("drain", "stop new flows to an active proxy (its flows finish on the second hop)"),
    action("deactivate", "take a draining proxy out of the table (cuts the connections it still has)"),
    action("fill", "bring an inactive proxy back as filling (new flows, second hop kept)"),
    action("activate", "make a filling proxy active"),
    action("abort", "abort the drain or fill in progress (draining -> active, filling -> inactive)"),
  ],
};
