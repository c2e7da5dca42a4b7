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
import { tableGroup } from "./commands/table/index";

/** Command groups; API groups (pool, proxy, ...) are added here. */
export const groups: CommandGroup[] = [tableGroup];

export function mainUsage(): string {
  const lines = groups.flatMap((g) => [
    `  ${g.name}: ${g.summary}`,
    ...g.commands.map((c) => `    tidectl ${g.name} ${c.name.padEnd(8)} ${c.summary}`),
  ]);
  return `Usage: tidectl <group> <command> [options]

Commands:
${lines.join("\n")}

Run "tidectl <group> <command> --help" for a command's options.
`;
}

function groupUsage(group: CommandGroup): string {
  return `Usage: tidectl ${group.name} <command> [options]

${group.summary}

Commands:
${group.commands.map((c) => `  ${c.name.padEnd(8)} ${c.summary}`).join("\n")}
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
