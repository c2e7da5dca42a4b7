import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { HostRole } from "@tide/contracts";
import { z } from "zod";
import type { AgentEnv } from "./env";

/** Defaults, as named constants (units in the name). */
export const DEFAULT_SAMPLE_INTERVAL_MS = 1_000;
export const DEFAULT_METRICS_LISTEN = "127.0.0.1:9464";
export const DEFAULT_BUFFER_MINUTES = 10;
export const DEFAULT_TABLE_DIR = "/var/lib/tide-agent/tables";
export const DEFAULT_SPOOL_DIR = "/var/lib/tide-agent/spool";
export const DEFAULT_BUFFER_MAX_MIB = 256;
export const DEFAULT_PMTU_INTERVAL_MS = 60_000;
export const DEFAULT_PMTU_SIZES = [1200, 1400, 1472];

/** A console's base URL, http or https (also what `tide-agent enroll` takes). */
const CONSOLE_URL_MESSAGE = "must be an http:// or https:// URL such as https://tide.example.net";
export const ConsoleUrl = z
  .string()
  .url(CONSOLE_URL_MESSAGE)
  .refine((u) => /^https?:\/\//i.test(u), CONSOLE_URL_MESSAGE);

export const AgentConfig = z
  .strictObject({
    consoleUrl: ConsoleUrl.nullable()
      .default(null)
      .describe("Console base URL; null = local-only (consoleUrls for several consoles)"),
    consoleUrls: z
      .array(ConsoleUrl)
      .min(1, "must list at least one console URL (leave it out to run local-only)")
      .nullable()
      .default(null)
      .describe(
        "Console base URLs to fail over between (console-urls.ts): the agent keeps using the one that " +
          "answers and moves to the next when it is unreachable; null = consoleUrl alone",
      ),
    hostTokenFile: z.string().min(1).nullable().default(null).describe("File holding the host token"),
    caFile: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe(
        "PEM file of the CA(s) that signed the console's TLS certificate; null = the system's CAs " +
          "(console-fetch.ts). Only these are trusted when it is set",
      ),
    hostname: z
      .string()
      .min(1)
      .default(() => hostname())
      .describe("Host name (the token's host)"),
    roles: z.array(HostRole).min(1).default(["host"]).describe("Roles of this host"),
    directorSocket: z.string().min(1).nullable().default(null).describe("tide-director control socket"),
    redirectSocket: z.string().min(1).nullable().default(null).describe("tide-redirect control socket"),
    probesBinary: z.string().min(1).nullable().default(null).describe("tide-probes path; null = probes off"),
    healthcheckBinary: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe(
        "tide-healthcheck path (director hosts check their pools' proxies with it); null = the installed " +
          "one (/usr/lib/tide) or the checkout's build",
      ),
    healthNetns: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/, "must be a network namespace name")
      .nullable()
      .default(null)
      .describe("Network namespace health checks run in (the director host's stack); null = the agent's own"),
    redirectPinDir: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe(
        "tide-redirect's --pin-dir: its stats map is read there with npm bpf; null or unreadable = the " +
          "control socket's JSON",
      ),
    probesPinDir: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe(
        "tide-probes' --pin-dir: the agent passes it to tide-probes and reads the NET_RX maps pinned there " +
          "with npm bpf; null or unreadable = tide-probes' JSON lines",
      ),
    nsdiagBinary: z
      .string()
      .min(1)
      .nullable()
      .optional()
      .describe(
        "tide-nsdiag path (one process samples every namespace); null/absent or not executable = " +
          "the fallback, one shell per namespace running ss every tick",
      ),
    namespaces: z
      .array(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "must be a network namespace name"))
      .nullable()
      .default(null)
      .describe(
        "Names of the only network namespaces to sample (ip netns names); null = every namespace. " +
          "For several lab 'hosts' on one kernel, each agent samples its own",
      ),
    pmtuTargets: z
      .array(z.string().min(1))
      .default([])
      .describe("Path MTU targets (tracepath and ping -M do), added to the console's"),
    pmtuSizes: z
      .array(z.int().min(68).max(9000))
      .default(DEFAULT_PMTU_SIZES)
      .describe("ping -M do payload sizes for configured targets (a 56-byte probe is always sent too)"),
    bcc: z
      .boolean()
      .default(true)
      .describe(
        "Run bcc's tcpconnlat and softirqs -d when installed and able to run (kernel headers, kprobes); " +
          "reported on or off with the reason, never required",
      ),
    pmtuIntervalMs: z
      .int()
      .min(5_000)
      .max(3_600_000)
      .default(DEFAULT_PMTU_INTERVAL_MS)
      .describe("Interval between path MTU checks of one target, ms (jittered by 20 %)"),
    sampleIntervalMs: z
      .int()
      .min(100)
      .max(60_000)
      .default(DEFAULT_SAMPLE_INTERVAL_MS)
      .describe("Sampling interval, ms"),
    metricsListen: z
      .string()
      .regex(/^(?:.+:\d{1,5})?$/, "must be host:port or empty")
      .default(DEFAULT_METRICS_LISTEN)
      .describe("host:port for /metrics; empty disables it"),
    bufferMinutes: z
      .int()
      .min(10)
      .max(24 * 60)
      .default(DEFAULT_BUFFER_MINUTES)
      .describe("Offline buffer, minutes (>= 10)"),
    bufferMaxMiB: z
      .int()
      .min(16)
      .max(16 * 1024)
      .default(DEFAULT_BUFFER_MAX_MIB)
      .describe("Offline buffer bound in MiB (memory and its spool on disk); the oldest samples go first"),
    spoolDir: z
      .string()
      .nullable()
      .default(DEFAULT_SPOOL_DIR)
      .transform((d) => (d === "" ? null : d))
      .describe(
        "Directory of the offline buffer on disk, replayed after a restart (one agent per directory); " +
          "null or empty = memory only",
      ),
    tableDir: z
      .string()
      .min(1)
      .default(DEFAULT_TABLE_DIR)
      .describe("Directory for downloaded director tables"),
  })
  .refine(
    (c) => !(c.consoleUrl !== null && c.consoleUrls !== null && !sameConsoles(c.consoleUrl, c.consoleUrls)),
    {
      message:
        "consoleUrl and consoleUrls are both set and name different consoles: set only one of them " +
        "(consoleUrls for several consoles)",
      path: ["consoleUrls"],
    },
  )
  .refine((c) => c.consoleUrls === null || new Set(c.consoleUrls).size === c.consoleUrls.length, {
    message: "lists the same console URL more than once",
    path: ["consoleUrls"],
  })
  .refine((c) => (c.consoleUrl === null && c.consoleUrls === null) || c.hostTokenFile !== null, {
    message: "hostTokenFile is required when consoleUrl or consoleUrls is set",
    path: ["hostTokenFile"],
  })
  // One list from here on: consoleUrls ([] = local-only); consoleUrl is its first URL (or null).
  .transform((c) => {
    const consoleUrls = c.consoleUrls ?? (c.consoleUrl !== null ? [c.consoleUrl] : []);
    return { ...c, consoleUrls, consoleUrl: consoleUrls[0] ?? null };
  })
  .describe("tide-agent configuration");

/** consoleUrl alongside consoleUrls is allowed only when it says the same: a list of that one URL. */
function sameConsoles(url: string, urls: readonly string[]): boolean {
  return urls.length === 1 && urls[0] === url;
}
export type AgentConfig = z.infer<typeof AgentConfig>;

const list = (s: string | undefined): string[] | undefined =>
  s === undefined
    ? undefined
    : s
        .split(",")
        .map((x) => x.trim())
        .filter((x) => x !== "");

/** Configuration from the environment only (undefined = not set there). */
export function configFromEnv(e: AgentEnv): Record<string, unknown> {
  const out: Record<string, unknown> = {
    // One URL, or several separated by commas (failover between them).
    consoleUrls: list(e.TIDE_CONSOLE_URL),
    hostTokenFile: e.TIDE_HOST_TOKEN_FILE,
    caFile: e.TIDE_CA_FILE,
    hostname: e.TIDE_HOSTNAME,
    roles: list(e.TIDE_ROLES),
    directorSocket: e.TIDE_DIRECTOR_SOCKET,
    redirectSocket: e.TIDE_REDIRECT_SOCKET,
    probesBinary: e.TIDE_PROBES_BINARY,
    healthcheckBinary: e.TIDE_HEALTHCHECK_BINARY,
    healthNetns: e.TIDE_HEALTH_NETNS,
    redirectPinDir: e.TIDE_REDIRECT_PIN_DIR,
    probesPinDir: e.TIDE_PROBES_PIN_DIR,
    nsdiagBinary: e.TIDE_NSDIAG_BINARY,
    namespaces: list(e.TIDE_NAMESPACES),
    pmtuTargets: list(e.TIDE_PMTU_TARGETS),
    sampleIntervalMs: e.TIDE_SAMPLE_INTERVAL_MS,
    metricsListen: e.TIDE_METRICS_LISTEN,
    bufferMinutes: e.TIDE_BUFFER_MINUTES,
    tableDir: e.TIDE_TABLE_DIR,
    spoolDir: e.TIDE_SPOOL_DIR,
    bufferMaxMiB: e.TIDE_BUFFER_MAX_MIB,
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}

/** consoleUrl and consoleUrls are one setting: a layer that sets either replaces both. */
const CONSOLE_KEYS = ["consoleUrl", "consoleUrls"] as const;

/** Merge file < environment < overrides, then validate (throws a readable error). */
export function resolveConfig(layers: readonly Record<string, unknown>[]): AgentConfig {
  const merged: Record<string, unknown> = {};
  for (const layer of layers) {
    if (CONSOLE_KEYS.some((k) => layer[k] !== undefined)) for (const k of CONSOLE_KEYS) delete merged[k];
    Object.assign(merged, layer);
  }
  const r = AgentConfig.safeParse(merged);
  if (!r.success) {
    throw new Error(
      `invalid configuration: ${r.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`,
    );
  }
  return r.data;
}

/** Read and parse a JSON configuration file. */
export function readConfigFile(path: string): Record<string, unknown> {
  const parsed: unknown = JSON.parse(readFileSync(path, "utf8"));
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`${path}: configuration must be a JSON object`);
  }
  return parsed as Record<string, unknown>;
}
