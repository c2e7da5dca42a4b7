import { z } from "zod";

/**
 * The console's configuration, parsed once (t3 habit). Only this file reads process.env; ESLint
 * forbids it elsewhere. DATABASE_URL is required when the server runs, not while `next build`
 * compiles pages (Next sets NEXT_PHASE then).
 */
const isBuild = process.env.NEXT_PHASE === "phase-production-build";

const schema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
  DATABASE_URL: isBuild
    ? z.string().optional()
    : z.string().url().describe("PostgreSQL URL the API layer connects to"),
  /** Force the Secure flag on the session cookie even when the request looks like plain http. */
  TIDE_SECURE_COOKIES: z
    .enum(["auto", "always", "never"])
    .default("auto")
    .describe("Secure session cookie: auto (when the request is https), always, never"),
});

export type ConsoleEnv = z.infer<typeof schema>;

let parsed: ConsoleEnv | undefined;

/** Parsed environment; throws a readable error listing what is wrong. */
export function env(): ConsoleEnv {
  if (!parsed) {
    const result = schema.safeParse(process.env);
    if (!result.success) {
      throw new Error(`invalid environment for @tide/console: ${z.prettifyError(result.error)}`);
    }
    parsed = result.data;
  }
  return parsed;
}

/** Build-time constant for code that also runs in the browser or the proxy (inlined by Next). */
export const isDevelopment = process.env.NODE_ENV === "development";
