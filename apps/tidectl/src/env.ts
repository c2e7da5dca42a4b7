import { z } from "zod";
import { DEFAULT_URL } from "./api/default-url";

/**
 * tidectl's environment, parsed once here (the API commands' connection settings). Flags win
 * over the environment: --url over TIDE_URL, --token over TIDE_TOKEN.
 * Loaded on demand by the API commands only (zod is most of the bundle's bytes; help and the
 * offline table tools must not pay for it).
 */

const Env = z.object({
  TIDE_URL: z
    .string()
    .optional()
    .describe(`Console base URL for the API commands (default ${DEFAULT_URL}); /api/v1 is appended`),
  TIDE_TOKEN: z
    .string()
    .optional()
    .describe("API token (tide_…) sent as 'Authorization: Bearer'; never printed"),
});
export type TidectlEnv = z.infer<typeof Env>;

/** Reads the variables tidectl uses from `source` (process.env unless a test passes its own). */
export function readEnv(source: Readonly<Record<string, string | undefined>> = process.env): TidectlEnv {
  // Only strings reach here (an environment has nothing else); empty counts as unset.
  const pick = (k: string) => (source[k] === "" ? undefined : source[k]);
  return Env.parse({ TIDE_URL: pick("TIDE_URL"), TIDE_TOKEN: pick("TIDE_TOKEN") });
}
