/**
 * What a command needs from its surroundings: output streams, a working directory and, for the
 * API commands, the environment and an HTTP client (tests pass their own).
 * Commands never call process.exit; they return an exit code (0 ok, 1 failed, 2 usage).
 */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Directory relative paths are resolved against. */
  cwd: string;
  /** Environment (TIDE_URL, TIDE_TOKEN), parsed by env.ts; process.env when absent. */
  env?: Readonly<Record<string, string | undefined>>;
  /** HTTP client for the API commands; the global fetch when absent. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** Bad command line: printed with the command's usage, exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
  readonly cliErrorKind = "usage";
}

/** The command ran and failed (bad input file, write error...): printed as is, exit 1. */
export class CommandError extends Error {
  override name = "CommandError";
  readonly cliErrorKind = "command";
}

/**
 * "usage" for a UsageError, "command" for a CommandError or a subclass (ApiError), else undefined.
 * A field, not instanceof: the bundle's entry and its command chunks each hold a copy of this file
 * (scripts/build.mjs keeps the entry one file), so a command's error is not an instance of the
 * entry's classes.
 */
export function cliErrorKind(e: unknown): "usage" | "command" | undefined {
  const kind = e instanceof Error ? (e as { cliErrorKind?: unknown }).cliErrorKind : undefined;
  return kind === "usage" || kind === "command" ? kind : undefined;
}

/** A command's code, loaded with its group (its name and summary are in commands/listing.ts). */
export interface Command {
  name: string;
  usage: string;
  run(args: string[], io: CliIo): Promise<number>;
}
