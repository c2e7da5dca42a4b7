import { readFileSync } from "node:fs";

/**
 * Tide's release version, declared once in the root package.json (as apps/agent/src/version.ts
 * reads it). A build that bundles the API may put it in with `--define:__TIDE_VERSION__=…`; the
 * sources run by tsx, vitest or the console read it from the checkout they sit in.
 */
declare const __TIDE_VERSION__: string | undefined;

/** The root package.json's version ("unknown" when neither the build nor a checkout says). */
function checkoutVersion(): string {
  try {
    // src/ is 3 levels below the repository root.
    const manifest = new URL("../../../package.json", import.meta.url);
    const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version?: unknown };
    return typeof version === "string" ? version : "unknown";
  } catch {
    return "unknown";
  }
}

/** The console's Tide version (the enroll reply's consoleVersion, the agent version check). */
export const TIDE_VERSION: string =
  typeof __TIDE_VERSION__ === "string" ? __TIDE_VERSION__ : checkoutVersion();
