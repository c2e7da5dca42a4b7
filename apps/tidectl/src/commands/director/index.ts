/** Directors over the REST API: list, register, assign/unassign pools, remove. */
import { type CommandGroup } from "../../cli-io";
import { apiCommand } from "../../api/command";
import { directorId, poolId } from "../../api/resolve";
import { type DirectorReply, type PoolSummaryReply } from "../../api/replies";
import { columns } from "../../table-files";

const G = "director";

const poolNames = (d: DirectorReply, names: Map<string, string>) =>
  (d.pools ? d.pools.map((p) => p.name) : d.poolIds.map((id) => names.get(id) ?? id)).join(", ") || "-";

const directorLine = (d: DirectorReply) => `${d.hostname} (${d.id}) serves ${poolNames(d, new Map())}`;

/** assign / unassign: the same two arguments, PUT or DELETE. */
function membership(name: "assign" | "unassign") {
  return apiCommand(G, {
    name,
    summary: name === "assign" ? "make a director serve a pool" : "stop a director serving a pool",
    args: ["<director>", "<pool>"],
    description: `${name === "assign" ? "Make a director serve" : "Stop a director serving"} a pool. <director>: host name or dir_… id; <pool>: name or pool_… id.`,
    async run({ api, args }) {
      const dir = await directorId(api, args[0]!);
      const pool = await poolId(api, args[1]!);
      const d = await api.request<DirectorReply>(
        name === "assign" ? "PUT" : "DELETE",
        `/directors/${dir}/pools/${pool}`,
      );
      return { reply: d, text: `${directorLine(d)}\n` };
    },
  });
}

export const directorGroup: CommandGroup = {
  name: G,
  summary: "directors over the REST API (host names or dir_… ids)",
  commands: [
    apiCommand(G, {
      name: "list",
      summary: "list directors and the pools they serve",
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
      summary: "register a director by the host name its agent reports",
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
      summary: "remove a director",
      args: ["<director>"],
      async run({ api, args }) {
        const id = await directorId(api, args[0]!);
        const r = await api.request<{ removed: DirectorReply }>("DELETE", `/directors/${id}`);
        return { reply: r, text: `removed director ${r.removed.hostname} (${r.removed.id})\n` };
      },
    }),
  ],
};
