/** Directors over the REST API: list, register, assign/unassign pools, remove. */
import { type Command } from "../../cli-io";
import { apiCommand, stringOption } from "../../api/command";
import { directorId, poolId } from "../../api/resolve";
import { type DirectorReply, type PoolSummaryReply } from "../../api/replies";
import { columns } from "../../table-files";

const G = "director";

/** A change-safety preview: what the readable output prints (the rest reaches --json). */
interface ChangeSafetyReply {
  breaks: boolean | null;
  broken: number;
  message: string;
}

const poolNames = (d: DirectorReply, names: Map<string, string>) =>
  (d.pools ? d.pools.map((p) => p.name) : d.poolIds.map((id) => names.get(id) ?? id)).join(", ") || "-";

const directorLine = (d: DirectorReply) => `${d.hostname} (${d.id}) serves ${poolNames(d, new Map())}`;

const reasonHelp = "  --reason TEXT   why (audit log); needed when the change breaks connections";
const previewHelp = "  --preview       only say whether it would break established connections";

/** ?reason=… for a DELETE (its input travels in the query). */
const reasonQuery = (reason: string | undefined) =>
  reason === undefined ? "" : `?reason=${encodeURIComponent(reason)}`;

/** assign / unassign: the same two arguments, PUT or DELETE. */
function membership(name: "assign" | "unassign") {
  const unassign = name === "unassign";
  return apiCommand(G, {
    name,
    args: ["<director>", "<pool>"],
    ...(unassign
      ? {
          options: { reason: { type: "string" as const }, preview: { type: "boolean" as const } },
          optionHelp: [reasonHelp, previewHelp],
        }
      : {}),
    description: unassign
      ? "Stop a director serving a pool. <director>: host name or dir_… id; <pool>: name or pool_… id.\n" +
        "While another director serves the pool nothing breaks (it serves the same table). As the\n" +
        "pool's last director its VIPs stop: the API refuses when the proxies report connections to\n" +
        "them, unless --reason is given. Assign another director first to keep them."
      : "Make a director serve a pool. <director>: host name or dir_… id; <pool>: name or pool_… id.\n" +
        "Breaks no connection: it serves the same table as the pool's other directors.",
    async run({ api, args, values }) {
      const dir = await directorId(api, args[0]!);
      const pool = await poolId(api, args[1]!);
      if (values.preview) {
        const p = await api.request<ChangeSafetyReply>(
          "GET",
          `/directors/${dir}/pools/${pool}/unassign/preview`,
        );
        return { reply: p, text: `${p.message}\n` };
      }
      const path = `/directors/${dir}/pools/${pool}`;
      const d = unassign
        ? await api.request<DirectorReply>("DELETE", path + reasonQuery(stringOption(values, "reason")))
        : await api.request<DirectorReply>("PUT", path);
      return { reply: d, text: `${directorLine(d)}\n` };
    },
  });
}

export const directorCommands: Command[] = [
  apiCommand(G, {
    name: "list",
    args: [],
    async run({ api }) {
      const directors = await api.request<DirectorReply[]>("GET", "/directors");
      if (directors.length === 0) return { reply: directors, text: "no directors\n" };
      // The list names pools by id; one more call turns them into names.
      const pools = await api.request<PoolSummaryReply[]>("GET", "/pools");
      const names = new Map(pools.map((p) => [p.id, p.name]));
      return {
        reply: directors,
        text: columns([
          ["hostname", "id", "pools"],
          ...directors.map((d) => [d.hostname, d.id, poolNames(d, names)]),
        ]),
      };
    },
  }),
  apiCommand(G, {
    name: "register",
    args: ["<hostname>"],
    async run({ api, args }) {
      const d = await api.request<DirectorReply>("POST", "/directors", { hostname: args[0] });
      return { reply: d, text: `registered ${directorLine(d)}\n` };
    },
  }),
  membership("assign"),
  membership("unassign"),
  apiCommand(G, {
    name: "remove",
    args: ["<director>"],
    options: { reason: { type: "string" }, preview: { type: "boolean" } },
    optionHelp: [reasonHelp, previewHelp],
    description:
      "Remove a director: it stops serving each of its pools. The API refuses when it is the last\n" +
      "director of a pool whose proxies report connections, unless --reason is given.",
    async run({ api, args, values }) {
      const id = await directorId(api, args[0]!);
      if (values.preview) {
        const p = await api.request<ChangeSafetyReply>("GET", `/directors/${id}/remove/preview`);
        return { reply: p, text: `${p.message}\n` };
      }
      const r = await api.request<{ removed: DirectorReply }>(
        "DELETE",
        `/directors/${id}${reasonQuery(stringOption(values, "reason"))}`,
      );
      return { reply: r, text: `removed director ${r.removed.hostname} (${r.removed.id})\n` };
    },
  }),
];
