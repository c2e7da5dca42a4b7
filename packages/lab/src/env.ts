/**
 * The lab's configuration, parsed once from the environment (t3 habit: nothing else reads
 * process.env). Every variable is optional; the defaults point into this checkout.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { LabError } from "./errors";

/** The monorepo root: packages/lab/src/ -> ../../.. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

const LabEnv = z.object({
  TIDE_LAB_DIR: z
    .string()
    .min(1)
    .optional()
    .describe("Root of the labs' state directories (one per topology); default <repo>/.tide/lab"),
  TIDE_DIRECTOR_BIN: z
    .string()
    .min(1)
    .optional()
    .describe("tide-director binary; default <repo>/dataplane/build/tide-director"),
  TIDE_REDIRECT_BIN: z
    .string()
    .min(1)
    .optional()
    .describe(
      "tide-redirect binary; default <repo>/dataplane/build/tide-redirect (optional: absent = no GUE decap)",
    ),
  TIDE_LAB_NODE_BIN: z
    .string()
    .min(1)
    .optional()
    .describe("node binary for the test servers and the client driver; default: the running node"),
  PATH: z
    .string()
    .optional()
    .describe("Command search path handed to the lab's agents (their environment is otherwise empty)"),
  TIDE_CONSOLE_URL: z
    .url()
    .optional()
    .describe("Console that owns the lab's fleet (console mode); --console overrides it"),
  TIDE_API_TOKEN: z
    .string()
    .min(1)
    .optional()
    .describe("Admin API token (tide_…) for console mode; --token-file overrides it"),
  TIDE_AGENT_BUNDLE: z
    .string()
    .min(1)
    .optional()
    .describe(
      "tide-agent bundle run per lab host in console mode; default <repo>/apps/agent/dist/tide-agent.js",
    ),
  TIDE_PROBES_BIN: z
    .string()
    .min(1)
    .optional()
    .describe(
      "tide-probes for the lab's agents; default <repo>/dataplane/build/tide-probes (absent = probes off)",
    ),
  TIDE_NSDIAG_BIN: z
    .string()
    .min(1)
    .optional()
    .describe(
      "tide-nsdiag for the lab's agents; default <repo>/dataplane/build/tide-nsdiag (absent = ss fallback)",
    ),
  TIDE_HEALTHCHECK_BIN: z
    .string()
    .min(1)
    .optional()
    .describe(
      "tide-healthcheck for the director hosts' agents; default <repo>/dataplane/build/tide-healthcheck " +
        "(absent = the agent looks for its own)",
    ),
});

export interface LabEnvironment {
  labRoot: string;
  directorBin: string;
  /** dataplane/tests/support/test-director: the one way to start a director without hardware. */
  directorLauncher: string;
  redirectBin: string;
  nodeBin: string;
  /** Console mode from the environment (flags override): base URL, or null. */
  consoleUrl: string | null;
  /** Admin API token from the environment, or null. Never logged. */
  apiToken: string | null;
  agentBundle: string;
  probesBin: string;
  nsdiagBin: string;
  healthcheckBin: string;
  /** PATH for processes started with a clean environment (the agents). */
  searchPath: string;
}

export function parseLabEnv(raw: Record<string, string | undefined>): LabEnvironment {
  const e = LabEnv.parse(raw);
  return {
    labRoot: path.resolve(e.TIDE_LAB_DIR ?? path.join(REPO_ROOT, ".tide", "lab")),
    directorBin: path.resolve(e.TIDE_DIRECTOR_BIN ?? path.join(REPO_ROOT, "dataplane/build/tide-director")),
    directorLauncher: path.join(REPO_ROOT, "dataplane/tests/support/test-director"),
    redirectBin: path.resolve(e.TIDE_REDIRECT_BIN ?? path.join(REPO_ROOT, "dataplane/build/tide-redirect")),
    nodeBin: e.TIDE_LAB_NODE_BIN ?? process.execPath,
    consoleUrl: e.TIDE_CONSOLE_URL ?? null,
    apiToken: e.TIDE_API_TOKEN ?? null,
    agentBundle: path.resolve(e.TIDE_AGENT_BUNDLE ?? path.join(REPO_ROOT, "apps/agent/dist/tide-agent.js")),
    probesBin: path.resolve(e.TIDE_PROBES_BIN ?? path.join(REPO_ROOT, "dataplane/build/tide-probes")),
    searchPath: e.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin",
    nsdiagBin: path.resolve(e.TIDE_NSDIAG_BIN ?? path.join(REPO_ROOT, "dataplane/build/tide-nsdiag")),
    healthcheckBin: path.resolve(
      e.TIDE_HEALTHCHECK_BIN ?? path.join(REPO_ROOT, "dataplane/build/tide-healthcheck"),
    ),
  };
}

export const labEnv: LabEnvironment = parseLabEnv(process.env);

/** The console a lab registers with (console mode), and the admin API token it uses. */
export interface ConsoleTarget {
  /** Base URL without a trailing slash, e.g. http://localhost:3000. */
  url: string;
  /** Admin API token (tide_…). Never logged, never written to the state file. */
  token: string;
  /** The file the token came from (recorded so `lab status` finds it again), or null (environment). */
  tokenFile: string | null;
}

/** Admin API tokens start with this; host tokens (tide_host_…) cannot register a fleet. */
const API_TOKEN_PREFIX = "tide_";
const HOST_TOKEN_PREFIX = "tide_host_";

/**
 * Console mode from the command line (--console, --token-file) over the environment
 * (TIDE_CONSOLE_URL, TIDE_API_TOKEN): null when neither names a console (standalone mode).
 */
export function resolveConsoleTarget(
  flags: { console?: string | undefined; tokenFile?: string | undefined },
  env: Pick<LabEnvironment, "consoleUrl" | "apiToken"> = labEnv,
): ConsoleTarget | null {
  const rawUrl = flags.console ?? env.consoleUrl;
  if (rawUrl === null) {
    if (flags.tokenFile !== undefined) {
      throw new LabError("bad_argument", "--token-file needs --console URL (or TIDE_CONSOLE_URL)");
    }
    return null;
  }
  const url = z.url({ protocol: /^https?$/ }).safeParse(rawUrl);
  if (!url.success) throw new LabError("bad_argument", `--console must be an http(s) URL, got ${rawUrl}`);
  let token = env.apiToken;
  let tokenFile: string | null = null;
  if (flags.tokenFile !== undefined) {
    tokenFile = path.resolve(flags.tokenFile);
    try {
      token = readFileSync(tokenFile, "utf8").trim();
    } catch (e) {
      throw new LabError(
        "bad_argument",
        `cannot read the API token file ${tokenFile}: ${(e as Error).message}`,
      );
    }
  }
  if (token === null || token === "") {
    throw new LabError(
      "bad_argument",
      "console mode needs an admin API token: --token-file PATH or TIDE_API_TOKEN",
    );
  }
  if (!token.startsWith(API_TOKEN_PREFIX) || token.startsWith(HOST_TOKEN_PREFIX)) {
    throw new LabError("bad_argument", "the API token must be an admin API token (tide_…), not a host token");
  }
  return { url: url.data.replace(/\/+$/, ""), token, tokenFile };
}
