import { z } from "zod";

/**
 * The agent's environment, parsed once (lint forbids raw process.env elsewhere). Every setting can
 * also come from the --config JSON file; the environment wins over the file, flags over both.
 */
const Env = z.object({
  TIDE_AGENT_CONFIG: z.string().min(1).optional().describe("Path of the JSON configuration file"),
  TIDE_CONSOLE_URL: z
    .string()
    .optional()
    .describe("Console base URL, or several separated by commas (failover); unset = local-only"),
  TIDE_HOST_TOKEN_FILE: z.string().min(1).optional().describe("File holding the host token (tide_host_…)"),
  TIDE_CA_FILE: z
    .string()
    .min(1)
    .optional()
    .describe("PEM file of the CA that signed the console's TLS certificate (default: the system's CAs)"),
  TIDE_HOSTNAME: z.string().min(1).optional().describe("Host name (default: os.hostname())"),
  TIDE_ROLES: z.string().min(1).optional().describe("Comma-separated roles: director, proxy, host"),
  TIDE_DIRECTOR_SOCKET: z.string().min(1).optional().describe("tide-director control socket"),
  TIDE_REDIRECT_SOCKET: z.string().min(1).optional().describe("tide-redirect control socket"),
  TIDE_PROBES_BINARY: z.string().min(1).optional().describe("Path of tide-probes"),
  TIDE_HEALTHCHECK_BINARY: z.string().min(1).optional().describe("Path of tide-healthcheck"),
  TIDE_HEALTH_NETNS: z.string().min(1).optional().describe("Network namespace health checks run in"),
  TIDE_REDIRECT_PIN_DIR: z.string().min(1).optional().describe("tide-redirect's --pin-dir (stats map)"),
  TIDE_PROBES_PIN_DIR: z.string().min(1).optional().describe("tide-probes' --pin-dir (NET_RX maps)"),
  TIDE_NSDIAG_BINARY: z.string().min(1).optional().describe("Path of tide-nsdiag (namespace sampler)"),
  TIDE_NAMESPACES: z
    .string()
    .optional()
    .describe("Comma-separated network namespace names to sample (default: all)"),
  TIDE_PMTU_TARGETS: z.string().optional().describe("Comma-separated path MTU targets"),
  TIDE_SAMPLE_INTERVAL_MS: z.coerce.number().int().optional().describe("Sampling interval in ms"),
  TIDE_METRICS_LISTEN: z.string().optional().describe("host:port of /metrics, or empty to disable"),
  TIDE_BUFFER_MINUTES: z.coerce.number().int().optional().describe("Minutes of samples kept offline"),
  TIDE_TABLE_DIR: z.string().min(1).optional().describe("Where downloaded director tables are written"),
  TIDE_SPOOL_DIR: z
    .string()
    .optional()
    .describe("Offline buffer on disk (default /var/lib/tide-agent/spool); empty = memory only"),
  TIDE_BUFFER_MAX_MIB: z.coerce.number().int().optional().describe("Offline buffer bound, MiB"),
  NOTIFY_SOCKET: z
    .string()
    .min(1)
    .optional()
    .describe("Set by systemd for a Type=notify unit: readiness and status go there (systemd/notify.ts)"),
});
export type AgentEnv = z.infer<typeof Env>;

/**
 * The environment, parsed once by main.ts. Throws a readable error naming each bad variable: a bad
 * environment is a bad configuration (exit 2, which the unit does not restart).
 */
export function parseEnv(source: Record<string, string | undefined> = process.env): AgentEnv {
  const r = Env.safeParse(source);
  if (!r.success) {
    throw new Error(
      `invalid environment: ${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  }
  return r.data;
}
