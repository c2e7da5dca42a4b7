/**
 * What a command needs from its surroundings: output streams and a working directory.
 * Commands never call process.exit; they return an exit code (0 ok, 1 failed, 2 usage).
 */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Directory relative paths are resolved against. */
  cwd: string;
}

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** Bad command line: printed with the command's usage, exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** The command ran and failed (bad input file, write error...): printed as is, exit 1. */
export class CommandError extends Error {
  override name = "CommandError";
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  run(args: string[], io: CliIo): Promise<number>;
}

/** A group of subcommands (e.g. "table"); later groups such as "pool" or "proxy" slot in here. */
export interface CommandGroup {
  name: string;
  summary: string;
  commands: Command[];
}
