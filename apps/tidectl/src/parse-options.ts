import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./cli-io";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** node:util parseArgs in strict mode, with its errors turned into UsageError. */
export function parseOptions<O extends Options>(args: string[], options: O) {
  try {
    return parseArgs({
      args,
      options: { ...options, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
}

/** Parses a non-negative integer option value. */
export function parseIndex(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^(0|[1-9][0-9]*)$/.test(value))
    throw new UsageError(`--${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return Number(value);
}
