import { readFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "@tide/devstack";

/**
 * Tide's release version (the root package.json's): what the agents these tests and benches stand
 * in for report. The console refuses an agent more than one minor version away from its own.
 */
export const TIDE_VERSION: string = (
  JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string }
).version;
