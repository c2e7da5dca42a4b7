/**
 * Hosts over the REST API (admin tokens): enroll a new one (a one-time token and the command to
 * run on it), list, remove, and the enrollment tokens made so far.
 */
import { CommandError, UsageError, type Command } from "../../cli-io";
import { type ApiClient } from "../../api/client";
import { apiCommand, stringList, stringOption, type OptionValues } from "../../api/command";
import {
  type EnrollmentTokenCreatedReply,
  type EnrollmentTokenReply,
  type HostReply,
} from "../../api/replies";
import { columns } from "../../table-files";

const G = "host";

/** "proxy,director" and repeated --role flags, as one list; the API checks the names. */
function roles(values: OptionValues): string[] {
  const list = stringList(values, "role").flatMap((r) => r.split(",").map((x) => x.trim()));
  if (list.length === 0 || list.some((r) => r === ""))
    throw new UsageError("--role is required: proxy, director or host (several: --role proxy,director)");
  return list;
}

function minutes(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[1-9][0-9]{0,5}$/.test(text))
    throw new UsageError(`--expires must be a whole number of minutes, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** "in 59 min" / "in 3 h" / "in 2 d" until `iso`, from `now` (ms). */
function until(iso: string, now: number): string {
  const min = Math.round((Date.parse(iso) - now) / 60_000);
  if (min < 120) return `in ${min} min`;
  if (min < 48 * 60) return `in ${Math.round(min / 60)} h`;
  return `in ${Math.round(min / (24 * 60))} d`;
}

function addedText(r: EnrollmentTokenCreatedReply, now: number): string {
  const s = r.summary;
  return `enrollment token for ${s.hostname} (${s.roles.join(", ")}), ${s.id}, expires ${s.expiresAt} (${until(s.expiresAt, now)}).
It is shown only this once. Run this on ${s.hostname}, as root:

  ${r.command}

The host then has its own host token; the enrollment token is spent.
`;
}

/** The pending enrollment token of a host name, or the id given. */
async function enrollmentTokenId(api: ApiClient, ref: string): Promise<string> {
  if (/^enr_[0-9a-z]{4,40}$/.test(ref)) return ref;
  const tokens = await api.request<EnrollmentTokenReply[]>(
    "GET",
    `/enrollment-tokens?hostname=${encodeURIComponent(ref)}`,
  );
  const pending = tokens.filter((t) => t.state === "pending");
  if (pending.length === 1) return pending[0]!.id;
  if (pending.length === 0) throw new CommandError(`no pending enrollment token for ${JSON.stringify(ref)}`);
  throw new CommandError(
    `${pending.length} pending enrollment tokens for ${ref}: ${pending.map((t) => t.id).join(", ")}; give the id`,
  );
}

export const hostCommands: Command[] = [
  apiCommand(G, {
    name: "add",
    args: ["<hostname>"],
    options: { role: { type: "string", multiple: true }, expires: { type: "string" } },
    optionHelp: [
      "  --role ROLES    proxy, director and/or host, comma-separated (required)",
      "  --expires MIN   minutes until the token expires (default 60, 5 to 10080)",
    ],
    description:
      "Make a one-time enrollment token for a new host and print it with the exact command to run on\n" +
      "the host (tide-agent enroll <console URL> --token …). The token is shown only this once; the\n" +
      "host trades it for its own host token. <hostname>: the name the host will have in the fleet.",
    async run({ api, args, values }) {
      const expiresInMinutes = minutes(stringOption(values, "expires"));
      const reply = await api.request<EnrollmentTokenCreatedReply>("POST", "/enrollment-tokens", {
        hostname: args[0],
        roles: roles(values),
        ...(expiresInMinutes === undefined ? {} : { expiresInMinutes }),
      });
      return { reply, text: addedText(reply, Date.now()) };
    },
  }),
  apiCommand(G, {
    name: "list",
    args: [],
    async run({ api }) {
      const hosts = await api.request<HostReply[]>("GET", "/hosts");
      if (hosts.length === 0) return { reply: hosts, text: "no hosts\n" };
      return {
        reply: hosts,
        text: columns([
          ["hostname", "roles", "last seen", "agent", "findings", "id"],
          ...hosts.map((h) => [
            h.name,
            h.roles.join(",") || "-",
            `${h.lastSeenAt ?? "never"}${h.health.stale ? " (stale)" : ""}`,
            h.agentVersion ?? "-",
            String(h.health.openFindings),
            h.id,
          ]),
        ]),
      };
    },
  }),
  apiCommand(G, {
    name: "remove",
    args: ["<host>"],
    description:
      "Remove a host: its host tokens stop working at once, and its samples and findings go with it.\n" +
      "Refused while a director has the host's name (remove the director first). <host>: host name or host_… id.",
    async run({ api, args }) {
      const r = await api.request<{ removed: { id: string; name: string; tokenIds: string[] } }>(
        "DELETE",
        `/hosts/${encodeURIComponent(args[0]!)}`,
      );
      const n = r.removed.tokenIds.length;
      return {
        reply: r,
        text: `removed host ${r.removed.name} (${r.removed.id}); ${n} host token${n === 1 ? "" : "s"} no longer work${n === 1 ? "s" : ""}\n`,
      };
    },
  }),
  apiCommand(G, {
    name: "tokens",
    args: [],
    async run({ api }) {
      const tokens = await api.request<EnrollmentTokenReply[]>("GET", "/enrollment-tokens");
      if (tokens.length === 0) return { reply: tokens, text: "no enrollment tokens\n" };
      return {
        reply: tokens,
        text: columns([
          ["hostname", "roles", "state", "expires", "created by", "id"],
          ...tokens.map((t) => [
            t.hostname,
            t.roles.join(","),
            t.state === "used" && t.usedAt ? `used ${t.usedAt}` : t.state,
            t.expiresAt,
            t.createdBy,
            t.id,
          ]),
        ]),
      };
    },
  }),
  apiCommand(G, {
    name: "revoke",
    args: ["<token>"],
    description:
      "Revoke a pending enrollment token. <token>: its enr_… id, or the host name it was made for.",
    async run({ api, args }) {
      const id = await enrollmentTokenId(api, args[0]!);
      const t = await api.request<EnrollmentTokenReply>("DELETE", `/enrollment-tokens/${id}`);
      return { reply: t, text: `revoked enrollment token ${t.id} for ${t.hostname}\n` };
    },
  }),
];
