/**
 * tidectl command dispatch: `tidectl <group> <command> [args]`.
 * Exit codes: 0 ok, 1 the command failed, 2 bad usage.
 */
import {
  CommandError,
  EXIT_FAILED,
  EXIT_OK,
  EXIT_USAGE,
  UsageError,
  type CliIo,
  type CommandGroup,
} from "./cli-io";
import { directorGroup } from "./commands/director/index";
import { hostGroup } from "./commands/host/index";
import { poolGroup } from "./commands/pool/index";
import { proxyGroup } from "./commands/proxy/index";
import { tableGroup } from "./commands/table/index";
import { userGroup } from "./commands/user/index";
import { versionGroup } from "./commands/version/index";

/** Command groups: offline table tools, then the REST API groups. */
export const groups: CommandGroup[] = [
  tableGroup,
  poolGroup,
  proxyGroup,
  versionGroup,
  directorGroup,
  hostGroup,
  userGroup,
];

export function mainUsage(): string {
  const width = Math.max(...groups.flatMap((g) => g.commands.map((c) => `${g.name} ${c.name}`.length)));
  const lines = groups.flatMap((g) => [
    `  ${g.name}: ${g.summary}`,
    ...g.commands.map((c) => `    tidectl ${`${g.name} ${c.name}`.padEnd(width)}  ${c.summary}`),
  ]);
  return `Usage: tidectl <group> <command> [options]

Commands:
${lines.join("\n")}

API commands talk to the console's REST API: --url / TIDE_URL (default http://localhost:3000),
--token / TIDE_TOKEN (an API token tide_…). --json prints the API's reply.
Run "tidectl <group> <command> --help" for a command's options.
`;
}

function groupUsage(group: CommandGroup): string {
  return `Usage: tidectl ${group.name} <command> [options]

${group.summary}

Commands:
${group.commands.map((c) => `  ${c.name.padEnd(14)} ${c.summary}`).join("\n")}
`;
}

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [groupName, commandName, ...rest] = argv;
  if (groupName === undefined || groupName === "--help" || groupName === "-h" || groupName === "help") {
    (groupName === undefined ? io.stderr : io.stdout)(mainUsage());
    return groupName === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const group = groups.find((g) => g.name === groupName);
  if (!group) {
    io.stderr(`tidectl: unknown command ${JSON.stringify(groupName)}\n\n${mainUsage()}`);
    return EXIT_USAGE;
  }
  if (commandName === undefined || commandName === "--help" || commandName === "-h") {
    (commandName === undefined ? io.stderr : io.stdout)(groupUsage(group));
    return commandName === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const command = group.commands.find((c) => c.name === commandName);
  if (!command) {
    io.stderr(`tidectl: unknown command "${group.name} ${commandName}"\n\n${groupUsage(group)}`);
    return EXIT_USAGE;
  }
  try {
    return await command.run(rest, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`tidectl ${group.name} ${command.name}: ${e.message}\n\n${command.usage}`);
      return EXIT_USAGE;
    }
    if (e instanceof CommandError) {
      io.stderr(`tidectl ${group.name} ${command.name}: ${e.message}\n`);
      return EXIT_FAILED;
    }
    io.stderr(
      `tidectl ${group.name} ${command.name}: unexpected error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
    );
    return EXIT_FAILED;
  }
}

export { EXIT_OK };
