/** Pools over the REST API: list, show, create, edit, binds, hash-fields, delete. */
import { FlowError, normalizeHashFields, type HashField } from "@tide/forwarding";
import { UsageError, type Command } from "../../cli-io";
import { formatBind, parseBind } from "../../api/binds";
import { apiCommand, stringList, stringOption } from "../../api/command";
import { poolId } from "../../api/resolve";
import {
  type HashFieldsPreviewReply,
  type PoolChangeReply,
  type PoolDetailReply,
  type PoolSummaryReply,
  type TableVersionReply,
} from "../../api/replies";
import { columns, percent } from "../../table-files";

const G = "pool";

function hashFields(text: string): HashField[] {
  try {
    return normalizeHashFields(text.split(",").map((f) => f.trim()));
  } catch (e) {
    if (e instanceof FlowError) throw new UsageError(`hash fields: ${e.message}`);
    throw e;
  }
}

const counts = (p: PoolSummaryReply) => {
  const c = p.proxyCounts;
  const parts = [`${c.active} active`];
  if (c.draining) parts.push(`${c.draining} draining`);
  if (c.filling) parts.push(`${c.filling} filling`);
  if (c.inactive) parts.push(`${c.inactive} inactive`);
  if (c.unhealthy) parts.push(`${c.unhealthy} unhealthy`);
  return parts.join(", ");
};

const versionText = (v: TableVersionReply | null) => (v ? `v${v.version}` : "none");

export function poolText(p: PoolDetailReply): string {
  return (
    columns([
      ["pool", `${p.name} (${p.id})`],
      ["description", p.description || "-"],
      ["hash fields", p.hashFields.join(",")],
      ["binds", p.binds.map(formatBind).join(", ") || "-"],
      ["proxies", counts(p)],
      ["directors", p.directors.map((d) => d.hostname).join(", ") || "-"],
      ["table version", versionText(p.currentVersion)],
    ]) +
    (p.proxies.length === 0
      ? ""
      : "\n" +
        columns([
          ["slot", "hostname", "address", "state", "health", "id"],
          ...p.proxies.map((x) => [
            String(x.slot),
            x.hostname,
            x.address,
            x.state,
            x.health.healthy ? "healthy" : `unhealthy (${x.health.reason})`,
            x.id,
          ]),
        ]))
  );
}

const changeText = (r: PoolChangeReply, what: string) =>
  `${what}; ${r.tableVersion ? `table version v${r.tableVersion.version} written` : "no table version written (no usable proxy yet)"}\n\n${poolText(r.pool)}`;

const bindOption = { bind: { type: "string" as const, multiple: true } };
const bindHelp = [
  '  --bind BIND     a VIP bind, repeatable: "tcp 203.0.113.10:443", "tcp 203.0.113.64/26:8000-8099",',
  '                  "udp [2001:db8::10]:53" (or tcp:ADDRESS:PORT without quotes)',
];

export const poolCommands: Command[] = [
  apiCommand(G, {
    name: "list",
    args: [],
    async run({ api }) {
      const pools = await api.request<PoolSummaryReply[]>("GET", "/pools");
      const text =
        pools.length === 0
          ? "no pools\n"
          : columns([
              ["name", "id", "binds", "hash fields", "proxies", "directors", "version"],
              ...pools.map((p) => [
                p.name,
                p.id,
                p.binds.map(formatBind).join(", ") || "-",
                p.hashFields.join(","),
                counts(p),
                String(p.directorIds.length),
                versionText(p.currentVersion),
              ]),
            ]);
      return { reply: pools, text };
    },
  }),
  apiCommand(G, {
    name: "show",
    args: ["<pool>"],
    async run({ api, args }) {
      const id = await poolId(api, args[0]!);
      const pool = await api.request<PoolDetailReply>("GET", `/pools/${id}`);
      return { reply: pool, text: poolText(pool) };
    },
  }),
  apiCommand(G, {
    name: "create",
    args: ["<name>"],
    options: { ...bindOption, description: { type: "string" }, "hash-fields": { type: "string" } },
    optionHelp: [
      ...bindHelp,
      "  --description TEXT  what the pool serves",
      "  --hash-fields LIST  src_addr,dst_addr,src_port,dst_port (default src_addr)",
    ],
    async run({ api, args, values }) {
      const binds = stringList(values, "bind").map(parseBind);
      if (binds.length === 0) throw new UsageError("at least one --bind is required");
      const fields = stringOption(values, "hash-fields");
      const description = stringOption(values, "description");
      const pool = await api.request<PoolDetailReply>("POST", "/pools", {
        name: args[0],
        binds,
        ...(description === undefined ? {} : { description }),
        ...(fields === undefined ? {} : { hashFields: hashFields(fields) }),
      });
      return { reply: pool, text: `created pool ${pool.name} (${pool.id})\n\n${poolText(pool)}` };
    },
  }),
  apiCommand(G, {
    name: "edit",
    args: ["<pool>"],
    options: { name: { type: "string" }, description: { type: "string" } },
    optionHelp: ["  --name NAME         new name", "  --description TEXT  new description"],
    async run({ api, args, values }) {
      const name = stringOption(values, "name");
      const description = stringOption(values, "description");
      if (name === undefined && description === undefined)
        throw new UsageError("nothing to change: give --name and/or --description");
      const id = await poolId(api, args[0]!);
      const pool = await api.request<PoolDetailReply>("PATCH", `/pools/${id}`, {
        ...(name === undefined ? {} : { name }),
        ...(description === undefined ? {} : { description }),
      });
      return { reply: pool, text: `updated pool ${pool.name} (${pool.id})\n\n${poolText(pool)}` };
    },
  }),
  apiCommand(G, {
    name: "binds",
    args: ["<pool>"],
    options: { ...bindOption, reason: { type: "string" }, preview: { type: "boolean" } },
    optionHelp: [
      ...bindHelp,
      "  --reason TEXT   why (audit log and table version); needed when the change breaks connections",
      "  --preview       only say which binds stop and the established connections that break",
    ],
    description:
      "Without --bind: print the pool's binds. With --bind (repeatable): replace all of them\n" +
      "(a new table version; no flow moves). Removing or narrowing a bind stops the directors\n" +
      "forwarding it: the API refuses when the proxies report connections to it, unless --reason.",
    async run({ api, args, values }) {
      const binds = stringList(values, "bind").map(parseBind);
      const reason = stringOption(values, "reason");
      if (binds.length === 0 && (reason !== undefined || values.preview))
        throw new UsageError("--reason and --preview need --bind");
      const id = await poolId(api, args[0]!);
      if (values.preview) {
        const labels = binds.map(
          (b) => `${b.proto}/${b.address}:${b.portStart}${b.portEnd === undefined ? "" : `-${b.portEnd}`}`,
        );
        const p = await api.request<{ message: string }>(
          "GET",
          `/pools/${id}/binds/preview?binds=${encodeURIComponent(labels.join(","))}`,
        );
        return { reply: p, text: `${p.message}\n` };
      }
      if (binds.length === 0) {
        const pool = await api.request<PoolDetailReply>("GET", `/pools/${id}`);
        return { reply: pool.binds, text: pool.binds.map((b) => `${formatBind(b)}\n`).join("") };
      }
      const r = await api.request<PoolChangeReply>("PUT", `/pools/${id}/binds`, {
        binds,
        ...(reason === undefined ? {} : { reason }),
      });
      return { reply: r, text: changeText(r, `binds of ${r.pool.name} replaced`) };
    },
  }),
  apiCommand(G, {
    name: "hash-fields",
    args: ["<pool>", "[fields]?"],
    options: { preview: { type: "boolean" }, finish: { type: "boolean" }, reason: { type: "string" } },
    optionHelp: [
      "  --preview       only estimate the flows that would change primary proxy",
      "  --finish        finish the migration in progress (flows still on the old fields reset)",
      "  --reason TEXT   why (audit log and table version)",
    ],
    description:
      "Without fields: print the pool's hash fields (and a migration in progress). With fields\n" +
      "(comma separated, from src_addr, dst_addr, src_port, dst_port): set them. Nearly every\n" +
      "flow moves to another row; --preview estimates how many change proxy first. On a pool a\n" +
      "director serves the change migrates: the old fields stay as the alternate hash, so\n" +
      "established flows keep their proxy, until --finish (or the console, once no flow uses them).",
    async run({ api, args, values }) {
      const id = await poolId(api, args[0]!);
      if (values.finish) {
        if (args[1] !== undefined || values.preview) throw new UsageError("--finish takes no fields");
        const reason = stringOption(values, "reason");
        const r = await api.request<PoolChangeReply>(
          "POST",
          `/pools/${id}/hash-fields/migration/finish`,
          reason === undefined ? {} : { reason },
        );
        return { reply: r, text: changeText(r, `hash-field migration of ${r.pool.name} finished`) };
      }
      if (args[1] === undefined) {
        if (values.preview || values.reason !== undefined)
          throw new UsageError("--preview and --reason need the new fields");
        const pool = await api.request<PoolDetailReply>("GET", `/pools/${id}`);
        const m = pool.hashMigration;
        const migrating = m ? ` (migrating from ${m.from.join(",")} since ${m.startedAt})` : "";
        return { reply: pool.hashFields, text: `${pool.hashFields.join(",")}${migrating}\n` };
      }
      const fields = hashFields(args[1]);
      if (values.preview) {
        const p = await api.request<HashFieldsPreviewReply>(
          "GET",
          `/pools/${id}/hash-fields/preview?hashFields=${encodeURIComponent(fields.join(","))}`,
        );
        const text =
          p.fractionMoved === null
            ? `${p.from.join(",")} -> ${p.to.join(",")}: the pool has no table yet, no flow to move\n`
            : `${p.from.join(",")} -> ${p.to.join(",")}: ${p.flowsMoved} of ${p.sampleFlows} sampled client flows ` +
              `(${percent(p.fractionMoved)}) would change primary proxy\n`;
        const keeps = p.migrates
          ? "established connections are kept (the old fields stay as the alternate hash until finished)\n"
          : "";
        const refused = p.refusal ? `refused now: ${p.refusal}\n` : "";
        return { reply: p, text: text + keeps + refused };
      }
      const reason = stringOption(values, "reason");
      const r = await api.request<PoolChangeReply>("PUT", `/pools/${id}/hash-fields`, {
        hashFields: fields,
        ...(reason === undefined ? {} : { reason }),
      });
      return {
        reply: r,
        text: changeText(r, `hash fields of ${r.pool.name} set to ${r.pool.hashFields.join(",")}`),
      };
    },
  }),
  apiCommand(G, {
    name: "delete",
    args: ["<pool>"],
    options: { reason: { type: "string" } },
    optionHelp: ["  --reason TEXT   why (audit log)"],
    async run({ api, args, values }) {
      const id = await poolId(api, args[0]!);
      const reason = stringOption(values, "reason");
      const r = await api.request<{ removed: { id: string; name: string } }>(
        "DELETE",
        `/pools/${id}${reason === undefined ? "" : `?reason=${encodeURIComponent(reason)}`}`,
      );
      return { reply: r, text: `deleted pool ${r.removed.name} (${r.removed.id})\n` };
    },
  }),
];
