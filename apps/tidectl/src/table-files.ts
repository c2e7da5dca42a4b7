import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { decodeGlbd, GlbdFormatError, type ForwardingTable } from "@tide/forwarding";
import { CommandError, UsageError } from "./cli-io";

/**
 * Reads a whole input file. Synchronous: node:fs/promises costs ~3.5 ms of CPU to load, and a
 * table command has nothing to do while it reads (issue 28: start-up like a C tool).
 */
export function readInput(cwd: string, path: string, what: string): Uint8Array {
  try {
    return new Uint8Array(readFileSync(resolve(cwd, path)));
  } catch (e) {
    const reason = e instanceof Error && "code" in e ? String((e as NodeJS.ErrnoException).code) : String(e);
    throw new CommandError(`cannot read ${what} ${path}: ${reason}`);
  }
}

/** Reads and decodes a GLBD (v2 or v3) file; a bad file is a CommandError naming the file. */
export function readTables(cwd: string, path: string): ForwardingTable[] {
  const bytes = readInput(cwd, path, "table file");
  try {
    return decodeGlbd(bytes);
  } catch (e) {
    if (e instanceof GlbdFormatError)
      throw new CommandError(`${path}: not a valid GLBD table file: ${e.message} [${e.code}]`);
    throw e;
  }
}

export function pickTable(tables: ForwardingTable[], index: number, path: string): ForwardingTable {
  const table = tables[index];
  if (!table)
    throw new UsageError(`--table ${index}: ${path} has ${tables.length} table(s) (0..${tables.length - 1})`);
  return table;
}

/** "12.34%" */
export function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(2)}%`;
}

/** Left-aligned text columns. */
export function columns(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return (
    rows
      .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  "))
      .join("\n") + "\n"
  );
}
