import { readFileSync } from "node:fs";

/**
 * Tide's release version, declared once in the root package.json. The agent's build puts it into
 * the bundle (esbuild --define, see apps/agent/package.json "build"), so an installed tide-agent
 * needs no checkout; the sources run by tsx or vitest read it from the checkout they sit in.
 */
declare const __TIDE_VERSION__: string | undefined;

/** The root package.json's version, read from the checkout around these sources (src/ is 3 levels down). */
function checkoutVersion(): string {
  const manifest = new URL("../../../package.json", import.meta.url);
  const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version?: unknown };
  if (typeof version !== "string") throw new Error(`no "version" in ${manifest.pathname}`);
  return version;
}

/** tide-agent version: Tide's release version. */
export const AGENT_VERSION: string =
  typeof __TIDE_VERSION__ === "string" ? __TIDE_VERSION__ : checkoutVersion();
