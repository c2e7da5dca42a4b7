/**
 * A broken install: a file of the bundle that is not there (deleted, or not copied with
 * dist/tidectl.js). The bundle requires nothing but its own chunks (dist/tidectl-chunks/) and
 * node: built-ins, so any "cannot find module" while loading or running a command is one.
 */
import { dirname, resolve } from "node:path";

/** The missing file's path when `e` is CommonJS's "cannot find module" error, else undefined. */
export function missingFile(e: unknown): string | undefined {
  if (!(e instanceof Error)) return undefined;
  const request = /^Cannot find module '([^']+)'/.exec(e.message)?.[1];
  if (request === undefined) return undefined;
  if ((e as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") return undefined;
  // The request as written, relative to the file that required it, the first of
  // err.requireStack ("./chunk-X.cjs" from dist/tidectl-chunks/table.cjs).
  const from = (e as { requireStack?: unknown }).requireStack;
  const requirer = Array.isArray(from) && typeof from[0] === "string" ? from[0] : undefined;
  return requirer !== undefined && request.startsWith(".") ? resolve(dirname(requirer), request) : request;
}

/** The one line printed for it (exit 1), instead of Node's stack. */
export function brokenInstallMessage(path: string): string {
  return `tidectl: ${path} is missing, so this installation is broken: reinstall tidectl\n`;
}
