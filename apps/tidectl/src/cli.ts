/**
 * tidectl command dispatch: `tidectl <group> <command> [args]`.
 * Exit codes: 0 ok, 1 the command failed, 2 bad usage.
 */
import { brokenInstallMessage, missingFile } from "./broken-install";
import { cliErrorKind, EXIT_FAILED, EXIT_OK, EXIT_USAGE, type CliIo } from "./cli-io";
// Names and summaries only: a group's code is imported when one of its commands runs.
import { groups, type GroupListing } from "./commands/listing";

export function mainUsage(): string {
  const width = Math.max(
    ...groups.flatMap((g) => Object.keys(g.commands).map((c) => `${g.name} ${c}`.length)),
  );
  const lines = groups.flatMap((g) => [
    `  ${g.name}: ${g.summary}`,
    ...Object.entries(g.commands).map(
      ([name, summary]) => `    tidectl ${`${g.name} ${name}`.padEnd(width)}  ${summary}`,
    ),
  ]);
  return `Usage: tidectl <group> <command> [options]

Commands:
${lines.join("\n")}

API commands talk to the console's REST API: --url / TIDE_URL (default http://localhost:3000),
--token / TIDE_TOKEN (an API token tide_…). --json prints the API's reply.
Run "tidectl <group> <command> --help" for a command's options.
`;
}

function groupUsage(group: GroupListing): string {
  return `Usage: tidectl ${group.name} <command> [options]

${group.summary}

Commands:
${Object.entries(group.commands)
  .map(([name, summary]) => `  ${name.padEnd(14)} ${summary}`)
  .join("\n")}
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
  if (!Object.hasOwn(group.commands, commandName)) {
    io.stderr(`tidectl: unknown command "${group.name} ${commandName}"\n\n${groupUsage(group)}`);
    return EXIT_USAGE;
  }
  let commands;
  try {
    commands = await group.load();
  } catch (e) {
    const missing = missingFile(e);
    if (missing === undefined) throw e;
    io.stderr(brokenInstallMessage(missing));
    return EXIT_FAILED;
  }
  const command = commands.find((c) => c.name === commandName);
  // listing.test.ts keeps every listed command in its group's module.
  if (!command) throw new Error(`tidectl: "${group.name} ${commandName}" is listed but its group lacks it`);
  try {
    return await command.run(rest, io);
  } catch (e) {
    const kind = cliErrorKind(e);
    if (kind === "usage" && e instanceof Error) {
      io.stderr(`tidectl ${group.name} ${command.name}: ${e.message}\n\n${command.usage}`);
      return EXIT_USAGE;
    }
    if (kind === "command" && e instanceof Error) {
      io.stderr(`tidectl ${group.name} ${command.name}: ${e.message}\n`);
      return EXIT_FAILED;
    }
    // A chunk a command loads as it runs (the API commands' env.ts) can be missing too.
    const missing = missingFile(e);
    if (missing !== undefined) {
      io.stderr(brokenInstallMessage(missing));
      return EXIT_FAILED;
    }
    io.stderr(
      `tidectl ${group.name} ${command.name}: unexpected error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
    );
    return EXIT_FAILED;
  }
}

export { EXIT_OK };
