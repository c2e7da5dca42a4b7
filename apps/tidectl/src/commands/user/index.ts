/** Console users over the REST API (admin tokens): list, create, role, disable, enable, reset-password. */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { CommandError, UsageError, type CliIo, type Command } from "../../cli-io";
import { apiCommand, stringOption, type OptionValues } from "../../api/command";
import { userId } from "../../api/resolve";
import { type UserReply } from "../../api/replies";
import { columns } from "../../table-files";

const G = "user";
const ROLES = ["viewer", "operator", "admin"];

const status = (u: UserReply) => (u.disabledAt ? `disabled since ${u.disabledAt}` : "enabled");
/** PATCH / disable / enable reply with the user itself; accept {user} as well. */
const asUser = (r: UserReply | { user: UserReply }): UserReply => ("user" in r ? r.user : r);
const userLine = (u: UserReply) => `${u.email} (${u.id}), ${u.role}, ${status(u)}`;

function role(text: string): string {
  if (!ROLES.includes(text))
    throw new UsageError(`role must be one of ${ROLES.join(", ")}, got ${JSON.stringify(text)}`);
  return text;
}

/**
 * --password-file: the first line of a file (a password on the command line would show in ps
 * and the shell history). Without it the API generates one and shows it once.
 */
async function password(values: OptionValues, io: CliIo): Promise<string | undefined> {
  const path = stringOption(values, "password-file");
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = await readFile(resolve(io.cwd, path), "utf8");
  } catch (e) {
    const reason = e instanceof Error && "code" in e ? String((e as NodeJS.ErrnoException).code) : String(e);
    throw new CommandError(`cannot read --password-file ${path}: ${reason}`);
  }
  const first = text.split(/\r?\n/)[0] ?? "";
  if (first === "") throw new CommandError(`--password-file ${path}: the first line is empty`);
  return first;
}

const passwordOption = { "password-file": { type: "string" as const } };
const passwordHelp = [
  "  --password-file FILE  take the password from the file's first line (default: the API",
  "                        generates one and prints it once)",
];
const passwordText = (p: string | null) => (p === null ? "" : `password (shown once): ${p}\n`);

export const userCommands: Command[] = [
  apiCommand(G, {
    name: "list",
    args: [],
    async run({ api }) {
      const users = await api.request<UserReply[]>("GET", "/users");
      return {
        reply: users,
        text: columns([
          ["email", "name", "role", "status", "id"],
          ...users.map((u) => [u.email, u.name, u.role, u.disabledAt ? "disabled" : "enabled", u.id]),
        ]),
      };
    },
  }),
  apiCommand(G, {
    name: "create",
    args: ["<email>"],
    options: { name: { type: "string" }, role: { type: "string" }, ...passwordOption },
    optionHelp: [
      "  --name NAME     display name (required)",
      `  --role ROLE     ${ROLES.join(", ")} (required)`,
      ...passwordHelp,
    ],
    async run({ api, args, values, io }) {
      const name = stringOption(values, "name");
      const r = stringOption(values, "role");
      if (name === undefined || r === undefined) throw new UsageError("--name and --role are required");
      const pw = await password(values, io);
      const reply = await api.request<{ user: UserReply; password: string | null }>("POST", "/users", {
        email: args[0],
        name,
        role: role(r),
        ...(pw === undefined ? {} : { password: pw }),
      });
      return { reply, text: `created ${userLine(reply.user)}\n${passwordText(reply.password)}` };
    },
  }),
  apiCommand(G, {
    name: "role",
    args: ["<user>", "<role>"],
    async run({ api, args }) {
      const r = role(args[1]!);
      const id = await userId(api, args[0]!);
      const reply = await api.request<UserReply | { user: UserReply }>("PATCH", `/users/${id}`, {
        role: r,
      });
      return { reply, text: `${userLine(asUser(reply))}\n` };
    },
  }),
  ...(["disable", "enable"] as const).map((verb) =>
    apiCommand(G, {
      name: verb,
      args: ["<user>"],
      async run({ api, args }) {
        const id = await userId(api, args[0]!);
        const reply = await api.request<UserReply | { user: UserReply }>("POST", `/users/${id}/${verb}`, {});
        return { reply, text: `${userLine(asUser(reply))}\n` };
      },
    }),
  ),
  apiCommand(G, {
    name: "reset-password",
    args: ["<user>"],
    options: passwordOption,
    optionHelp: passwordHelp,
    async run({ api, args, values, io }) {
      const pw = await password(values, io);
      const id = await userId(api, args[0]!);
      const reply = await api.request<{ user: UserReply; password: string | null }>(
        "POST",
        `/users/${id}/reset-password`,
        pw === undefined ? {} : { password: pw },
      );
      return { reply, text: `password reset for ${reply.user.email}\n${passwordText(reply.password)}` };
    },
  }),
];
