/**
 * The lab's configuration, parsed once from the environment (t3 habit: nothing else reads
 * process.env). Every variable is optional; the defaults point into this checkout.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";

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
});

export interface LabEnvironment {
  labRoot: string;
  directorBin: string;
  redirectBin: string;
  nodeBin: string;
}

export function parseLabEnv(raw: Record<string, string | undefined>): LabEnvironment {
  const e = LabEnv.parse(raw);
  return {
    labRoot: path.resolve(e.TIDE_LAB_DIR ?? path.join(REPO_ROOT, ".tide", "lab")),
    directorBin: path.resolve(e.TIDE_DIRECTOR_BIN ?? path.join(REPO_ROOT, "dataplane/build/tide-director")),
    redirectBin: path.resolve(e.TIDE_REDIRECT_BIN ?? path.join(REPO_ROOT, "dataplane/build/tide-redirect")),
    nodeBin: e.TIDE_LAB_NODE_BIN ?? process.execPath,
  };
}

export const labEnv: LabEnvironment = parseLabEnv(process.env);
