import { accessSync, constants } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The helper binaries the agent runs (dataplane/: built by `make -C dataplane`). */
export type HelperName = "tide-probes" | "tide-nsdiag" | "tide-healthcheck";

/** Where packages install the helpers (README's agent.json example). */
export const INSTALLED_HELPER_DIR = "/usr/lib/tide";
/** Where `make -C dataplane` puts them, relative to the checkout's root. */
export const CHECKOUT_HELPER_DIR = "dataplane/build";

/** How a helper was chosen: the config named it, or it was found in one of the usual places. */
export interface HelperChoice {
  name: HelperName;
  /** The binary to run; null = none found (the caller's fallback applies). */
  path: string | null;
  /** Why this one: "configured", "installed", "checkout", or "not found". */
  source: "configured" | "installed" | "checkout" | "not found";
  /** One line for doctor: where it came from, or every place that was looked at. */
  detail: string;
}

export interface HelperSearch {
  /** Directory of installed helpers (INSTALLED_HELPER_DIR unless a test says otherwise). */
  installedDir: string;
  /** Candidate checkout roots, in order; `<root>/dataplane/build/<name>` is tried for each. */
  checkoutRoots: readonly string[];
  /** Whether a file is an executable (injectable for tests; default: access X_OK). */
  isExecutable?: (file: string) => boolean;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The helper to run when the config leaves it null/absent: the installed path first (a packaged
 * host), then the checkout's build (a developer's first run). A configured path is used as given,
 * even when it is missing: the loader then says it is not executable, which is the truth the
 * operator needs. Pure except for the executable check.
 */
export function findHelper(
  name: HelperName,
  configured: string | null | undefined,
  search: HelperSearch,
): HelperChoice {
  if (configured !== null && configured !== undefined)
    return { name, path: configured, source: "configured", detail: `${configured} (from the config)` };
  const isExec = search.isExecutable ?? executable;
  const installed = path.join(search.installedDir, name);
  if (isExec(installed))
    return { name, path: installed, source: "installed", detail: `${installed} (installed)` };
  const tried = [installed];
  for (const root of search.checkoutRoots) {
    const built = path.join(root, CHECKOUT_HELPER_DIR, name);
    if (tried.includes(built)) continue;
    tried.push(built);
    if (isExec(built))
      return { name, path: built, source: "checkout", detail: `${built} (built in the checkout)` };
  }
  return {
    name,
    path: null,
    source: "not found",
    detail: `not configured, none executable at ${tried.join(", ")}`,
  };
}

/**
 * Checkout roots around the running agent: the bundle is apps/agent/dist/tide-agent.js and the
 * source (tsx, vitest) is apps/agent/src/*.ts, both three levels below the root; the entry script
 * (process.argv[1]) is tried too, for a copy of the bundle elsewhere in a checkout.
 */
export function checkoutRoots(
  moduleUrl: string = import.meta.url,
  script: string | undefined = process.argv[1],
): string[] {
  const roots: string[] = [];
  const add = (file: string): void => {
    const root = path.resolve(path.dirname(file), "../../..");
    if (!roots.includes(root)) roots.push(root);
  };
  if (moduleUrl.startsWith("file:")) add(fileURLToPath(moduleUrl));
  if (script !== undefined && script !== "") add(path.resolve(script));
  return roots;
}

/** tide-probes and tide-nsdiag for this config, searched in the usual places when it names none. */
export function findHelpers(
  config: { probesBinary: string | null; nsdiagBinary?: string | null | undefined },
  search: HelperSearch = { installedDir: INSTALLED_HELPER_DIR, checkoutRoots: checkoutRoots() },
): { probes: HelperChoice; nsdiag: HelperChoice } {
  return {
    probes: findHelper("tide-probes", config.probesBinary, search),
    nsdiag: findHelper("tide-nsdiag", config.nsdiagBinary, search),
  };
}
