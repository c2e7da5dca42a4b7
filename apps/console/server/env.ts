import fs from "node:fs";
import { z } from "zod";

/**
 * Configuration of the `tide-console` command (serve, migrate, create-admin, setup-postgres),
 * parsed once. Only this file reads process.env. On a Debian install systemd passes
 * /etc/tide/console.env (EnvironmentFile); from a shell, bin/tide-console names that file in
 * TIDE_CONSOLE_ENV_FILE and loadEnvFile() reads it, the environment's own values winning.
 */

/** Exit status for a configuration the operator must fix; the unit does not restart on it. */
export const EXIT_BAD_CONFIG = 2;

/** A configuration problem: printed without a stack, exit EXIT_BAD_CONFIG. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

const optionalPath = z
  .string()
  .optional()
  .transform((v) => (v === "" ? undefined : v));

const schema = z
  .object({
    DATABASE_URL: z
      .string()
      .url()
      .optional()
      .describe("PostgreSQL URL; setup-postgres writes one over the Unix socket /var/run/postgresql"),
    PORT: z.coerce.number().int().min(1).max(65535).default(3000).describe("TCP port the console listens on"),
    TIDE_CONSOLE_HOST: z
      .string()
      .min(1)
      .default("127.0.0.1")
      .describe("Address the console listens on (127.0.0.1: only a reverse proxy on this host reaches it)"),
    TIDE_TLS_CERT_FILE: optionalPath.describe(
      "PEM certificate chain; with TIDE_TLS_KEY_FILE the console serves HTTPS",
    ),
    TIDE_TLS_KEY_FILE: optionalPath.describe("PEM private key of TIDE_TLS_CERT_FILE"),
    NOTIFY_SOCKET: z
      .string()
      .optional()
      .describe("Set by systemd for Type=notify: readiness is reported there"),
    TIDE_CONSOLE_USER: z
      .string()
      .regex(/^[a-z_][a-z0-9_-]*$/, "a system user name")
      .default("tide-console")
      .describe("System user the console runs as (setup-postgres names its PostgreSQL role after it)"),
  })
  .refine((e) => (e.TIDE_TLS_CERT_FILE === undefined) === (e.TIDE_TLS_KEY_FILE === undefined), {
    message: "set both TIDE_TLS_CERT_FILE and TIDE_TLS_KEY_FILE for HTTPS, or neither for HTTP",
    path: ["TIDE_TLS_KEY_FILE"],
  });

export type ServerEnv = z.infer<typeof schema>;

let parsed: ServerEnv | undefined;

/** The parsed environment; a ConfigError naming every bad variable. */
export function serverEnv(): ServerEnv {
  if (!parsed) {
    const result = schema.safeParse(process.env);
    if (!result.success) throw new ConfigError(`invalid configuration: ${z.prettifyError(result.error)}`);
    parsed = result.data;
  }
  return parsed;
}

/** DATABASE_URL, or a ConfigError saying where it comes from. */
export function databaseUrl(): string {
  const url = serverEnv().DATABASE_URL;
  if (!url) {
    throw new ConfigError(
      "DATABASE_URL is not set: put it in /etc/tide/console.env (tide-console setup-postgres writes it)",
    );
  }
  return url;
}

/**
 * Loads the file TIDE_CONSOLE_ENV_FILE names (bin/tide-console sets /etc/tide/console.env) when
 * it exists; variables already in the environment win (as systemd's own environment does).
 */
export function loadEnvFile(): void {
  const file = process.env.TIDE_CONSOLE_ENV_FILE;
  if (!file || !fs.existsSync(file)) return;
  try {
    process.loadEnvFile(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ConfigError(
      code === "EACCES"
        ? `cannot read ${file} (mode 0640 root:tide-console): run as root or as tide-console`
        : `cannot read ${file}: ${(e as Error).message}`,
    );
  }
  parsed = undefined;
}

/** Next reads NODE_ENV when it loads: the served build is always the production one. */
export function setProductionMode(): void {
  Object.assign(process.env, { NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1" });
}

/**
 * Standalone output: the build's own config (required-server-files.json), so the server does not
 * compile next.config.ts (the release tree has neither the file nor the compiler). This is what
 * Next's generated standalone server.js sets before it loads `next`.
 */
export function setStandaloneConfig(config: unknown): void {
  process.env.__NEXT_PRIVATE_STANDALONE_CONFIG = JSON.stringify(config);
}

/** The environment for a child process, with `extra` on top. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...extra };
}
