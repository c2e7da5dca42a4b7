/**
 * apiCommand: the shared shape of every API command (pool, proxy, director, user groups).
 * Common options --url, --token, --json; exact positional arguments; the command returns the
 * raw reply (printed with --json) and the readable text (printed otherwise).
 */
import { type ParseArgsConfig } from "node:util";
import { EXIT_OK, UsageError, type CliIo, type Command } from "../cli-io";
import { commandSummary } from "../commands/listing";
import { DEFAULT_URL } from "./default-url";
import { parseOptions } from "../parse-options";
import { ApiClient, checkConfig } from "./client";

type Options = NonNullable<ParseArgsConfig["options"]>;
export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface ApiCall {
  api: ApiClient;
  /** Positional arguments, exactly as many as the command's `args`. */
  args: string[];
  values: OptionValues;
  io: CliIo;
}

export interface ApiOutput {
  /** The API's reply as received, printed by --json. */
  reply: unknown;
  /** What a person reads. */
  text: string;
}

export interface ApiCommandSpec {
  /** The command's name; its one-line summary is in commands/listing.ts. */
  name: string;
  /** Positional argument names, e.g. ["<pool>"]; an optional last one ends with "?". */
  args: string[];
  /** Command-specific options and their help lines. */
  options?: Options;
  optionHelp?: string[];
  /** Extra help text shown under the usage line. */
  description?: string;
  run(call: ApiCall): Promise<ApiOutput>;
}

const COMMON_HELP = [
  "  --json          print the API's reply as JSON",
  `  --url URL       console base URL (env TIDE_URL, default ${DEFAULT_URL})`,
  "  --token TOKEN   API token tide_… (env TIDE_TOKEN; prefer the environment: flags show in ps)",
  "  -h, --help      show this help",
];

export function apiCommand(group: string, spec: ApiCommandSpec): Command {
  const optionNames = Object.entries(spec.options ?? {}).map(([name, o]) =>
    o.type === "boolean" ? `[--${name}]` : `[--${name} …]`,
  );
  const usage = `Usage: tidectl ${group} ${spec.name} ${[...spec.args, ...optionNames, "[--json]"].join(" ")}

${spec.description ?? commandSummary(group, spec.name)}

Options:
${[...(spec.optionHelp ?? []), ...COMMON_HELP].join("\n")}

Exit status: 0 ok, 1 the API refused or failed (message and field errors printed), 2 bad usage.
`;
  return {
    name: spec.name,
    usage,
    async run(argv: string[], io: CliIo): Promise<number> {
      const { values, positionals } = parseOptions(argv, {
        ...spec.options,
        json: { type: "boolean" },
        url: { type: "string" },
        token: { type: "string" },
      });
      if (values.help) {
        io.stdout(usage);
        return EXIT_OK;
      }
      const required = spec.args.filter((a) => !a.endsWith("?")).length;
      if (positionals.length < required || positionals.length > spec.args.length)
        throw new UsageError(
          `expected ${spec.args.join(" ")}, got ${positionals.length} argument(s)`.replace(/\?/g, ""),
        );
      // Imported here, not at the top: env.ts brings zod, which only the API commands need.
      const { readEnv } = await import("../env");
      let env;
      try {
        env = readEnv(io.env);
      } catch (e) {
        throw new UsageError(`bad environment: ${e instanceof Error ? e.message : String(e)}`);
      }
      const config = checkConfig(
        typeof values.url === "string" ? values.url : (env.TIDE_URL ?? DEFAULT_URL),
        typeof values.token === "string" ? values.token : env.TIDE_TOKEN,
      );
      const api = new ApiClient(config, io.fetch ?? ((input, init) => fetch(input, init)));
      const out = await spec.run({ api, args: positionals, values, io });
      io.stdout(values.json ? `${JSON.stringify(out.reply, null, 2)}\n` : out.text);
      return EXIT_OK;
    },
  };
}

/** A string option's value, or undefined. */
export function stringOption(values: OptionValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === "string" ? v : undefined;
}

/** A repeatable string option's values. */
export function stringList(values: OptionValues, name: string): string[] {
  const v = values[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === "string");
}
