import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { release } from "node:os";
import path from "node:path";
import { ENROLLMENT_TOKEN_PREFIX, EnrollOut, type EnrollIn, type HostRole } from "@tide/contracts";
import { ConsoleUrl, resolveConfig } from "../config";
import { CA_REMEDY_ENROLL, consoleFetch, ConsoleTlsError } from "../console/console-fetch";
import { AGENT_VERSION } from "../version";
import { writeFileAtomic } from "./write-file";

/**
 * `tide-agent enroll <console URL> --token tide_enroll_…`: trade a one-time enrollment token for
 * this host's own host token (POST /api/v1/enroll, packages/contracts/src/enrollment.ts), write the
 * token file (0600) and agent.json (0644) for the installed layout, and start the tide-agent unit.
 * The token never appears in what this prints.
 */

/** The installed layout (the .deb): what the unit's ExecStart reads. */
export const DEFAULT_CONFIG_FILE = "/etc/tide/agent.json";
export const DEFAULT_TOKEN_FILE = "/etc/tide/host-token";
export const DIRECTOR_SOCKET = "/run/tide/director.sock";
export const REDIRECT_SOCKET = "/run/tide/redirect.sock";
/** Present when systemd is the running init (sd_booted(3)). */
export const SYSTEMD_RUNTIME_DIR = "/run/systemd/system";
export const UNIT = "tide-agent";

/** How long the console may take to answer the enrollment, ms. */
const ENROLL_TIMEOUT_MS = 30_000;
/** Longest enrollment token EnrollIn takes (its .max). */
const TOKEN_MAX_LENGTH = 200;

export const ENROLL_USAGE = `usage: tide-agent enroll <console URL> --token tide_enroll_… [--config FILE] [--token-file FILE]
                         [--ca-file FILE] [--force] [--no-start]
  --config FILE      agent configuration to write (default ${DEFAULT_CONFIG_FILE})
  --token-file FILE  where the host token is kept, mode 0600 (default ${DEFAULT_TOKEN_FILE})
  --ca-file FILE     PEM of the CA that signed the console's certificate (default: the system's CAs)
  --force            replace an existing configuration and host token (enroll this host again)
  --no-start         write the files only; do not enable and restart the ${UNIT} unit
`;

export interface EnrollArgs {
  consoleUrl: string;
  token: string;
  configFile: string;
  tokenFile: string;
  caFile: string | null;
  force: boolean;
  start: boolean;
}

/** Bad usage: exit 2 with the usage. The token is never part of the message. */
export class UsageError extends Error {}

export function parseEnrollArgs(argv: readonly string[]): EnrollArgs {
  const args = [...argv];
  const out: Partial<EnrollArgs> & { force: boolean; start: boolean } = { force: false, start: true };
  const value = (flag: string): string => {
    const v = args.shift();
    if (v === undefined || v === "" || v.startsWith("--")) throw new UsageError(`${flag} needs a value`);
    return v;
  };
  while (args.length > 0) {
    const a = args.shift()!;
    if (a === "--token") out.token = value(a);
    else if (a === "--config") out.configFile = value(a);
    else if (a === "--token-file") out.tokenFile = value(a);
    else if (a === "--ca-file") out.caFile = value(a);
    else if (a === "--force") out.force = true;
    else if (a === "--no-start") out.start = false;
    else if (a.startsWith("-")) throw new UsageError(`unknown option ${a}`);
    else if (out.consoleUrl === undefined) out.consoleUrl = a;
    else
      throw new UsageError(
        `unexpected argument ${a.startsWith(ENROLLMENT_TOKEN_PREFIX) ? "(a token: pass it with --token)" : a}`,
      );
  }
  if (out.consoleUrl === undefined) throw new UsageError("the console URL is missing");
  const url = ConsoleUrl.safeParse(out.consoleUrl);
  if (!url.success)
    throw new UsageError(`console URL ${out.consoleUrl}: ${url.error.issues[0]?.message ?? "invalid"}`);
  if (out.token === undefined)
    throw new UsageError("--token is missing (the enrollment token from the console)");
  if (!out.token.startsWith(ENROLLMENT_TOKEN_PREFIX) || out.token.length > TOKEN_MAX_LENGTH)
    throw new UsageError(`--token is not an enrollment token (they start with ${ENROLLMENT_TOKEN_PREFIX})`);
  return {
    // The base URL as the agent will use it (no trailing slash: paths are joined to it).
    consoleUrl: out.consoleUrl.replace(/\/+$/, ""),
    token: out.token,
    configFile: path.resolve(out.configFile ?? DEFAULT_CONFIG_FILE),
    tokenFile: path.resolve(out.tokenFile ?? DEFAULT_TOKEN_FILE),
    caFile: out.caFile !== undefined && out.caFile !== null ? path.resolve(out.caFile) : null,
    force: out.force,
    start: out.start,
  };
}

/** The console's CA, copied next to agent.json by `enroll --ca-file` (the package's purge removes it). */
export const CONSOLE_CA_FILE_NAME = "console-ca.pem";

/**
 * agent.json for an enrolled host: the console, the token file, the name and roles the console
 * gave, and the data plane sockets of the installed layout for its roles. tide-probes,
 * tide-nsdiag and tide-healthcheck are found in /usr/lib/tide without a key (binaries.ts).
 */
export function enrolledConfig(
  a: Pick<EnrollArgs, "consoleUrl" | "tokenFile" | "caFile">,
  out: { hostname: string; roles: readonly HostRole[] },
): Record<string, unknown> {
  return {
    consoleUrl: a.consoleUrl,
    hostTokenFile: a.tokenFile,
    hostname: out.hostname,
    roles: [...out.roles],
    ...(a.caFile !== null ? { caFile: a.caFile } : {}),
    ...(out.roles.includes("director") ? { directorSocket: DIRECTOR_SOCKET } : {}),
    ...(out.roles.includes("proxy") ? { redirectSocket: REDIRECT_SOCKET } : {}),
  };
}

/** Runs `systemctl ARGS`; resolves with its exit code and what it said on stderr. */
export type Systemctl = (args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>;

const systemctl: Systemctl = (args) =>
  new Promise((resolve) => {
    // restart waits for the unit's READY=1 (Type=notify): the first sample stored, or the console
    // found unreachable; systemd's own start timeout bounds it.
    execFile("systemctl", args, { timeout: 180_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === "number" ? err.code : 1;
      resolve({
        code,
        stdout: stdout.trim(),
        stderr: stderr.trim() || (err !== null && typeof err.code === "string" ? err.code : ""),
      });
    });
  });

export interface EnrollIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Where to look for a running systemd (tests: a temp dir). */
  systemdDir?: string;
  systemctl?: Systemctl;
  /** The CA bundle when no --ca-file is given (tests); default the system's. */
  systemCaBundle?: string;
  /** The configuration the unit runs with (tests); default DEFAULT_CONFIG_FILE. */
  unitConfigFile?: string;
}

/** What the console's JSON error says (`{ code, message }`, packages/api/src/http/errors.ts). */
function errorMessage(text: string): string | null {
  try {
    const body = JSON.parse(text) as unknown;
    if (typeof body === "object" && body !== null) {
      const m = (body as { message?: unknown; error?: { message?: unknown } }).message;
      if (typeof m === "string" && m !== "") return m;
      const nested = (body as { error?: { message?: unknown } }).error?.message;
      if (typeof nested === "string" && nested !== "") return nested;
    }
  } catch {
    // not JSON
  }
  return null;
}

/** Never show the token, even echoed back in an answer. */
function redactToken(text: string, token: string): string {
  return text
    .split(token)
    .join("[token]")
    .replace(/tide_(enroll|host)_[A-Za-z0-9_-]+/g, "tide_$1_[redacted]");
}

/** Returns the exit code: 0 enrolled, 1 refused or failed, 2 bad usage. */
export async function runEnroll(argv: readonly string[], io: EnrollIo): Promise<number> {
  const fail = (text: string): number => {
    io.stderr(`tide-agent enroll: ${text}\n`);
    return 1;
  };
  let a: EnrollArgs;
  try {
    a = parseEnrollArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr(`tide-agent enroll: ${err.message}\n${ENROLL_USAGE}`);
    return 2;
  }
  // Before the token is spent: an enrolled host is not enrolled again by accident.
  const existing = [a.configFile, a.tokenFile].filter((f) => existsSync(f));
  if (existing.length > 0 && !a.force)
    return fail(
      `${existing.join(" and ")} already ${existing.length > 1 ? "exist" : "exists"}: this host looks enrolled. ` +
        `Pass --force to enroll it again (both are replaced).`,
    );
  let fetchFn: ReturnType<typeof consoleFetch>;
  try {
    fetchFn = consoleFetch({
      caFile: a.caFile,
      caRemedy: CA_REMEDY_ENROLL,
      systemCaBundle: io.systemCaBundle,
    });
  } catch (err) {
    io.stderr(`tide-agent enroll: --ca-file: ${(err as Error).message}\n`);
    return 2;
  }
  const body: EnrollIn = { token: a.token, agentVersion: AGENT_VERSION, kernelRelease: release() };
  const url = `${a.consoleUrl}/api/v1/enroll`;
  let status: number;
  let text: string;
  try {
    const res = await fetchFn(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(ENROLL_TIMEOUT_MS),
    });
    status = res.status;
    text = await res.text();
  } catch (err) {
    if (err instanceof ConsoleTlsError) return fail(err.message);
    return fail(
      `cannot reach the console at ${a.consoleUrl}: ${redactToken((err as Error).message, a.token)}`,
    );
  } finally {
    fetchFn.close();
  }
  if (status < 200 || status > 299) {
    const said = errorMessage(text);
    if (said !== null) return fail(`the console refused the enrollment: ${redactToken(said, a.token)}`);
    return fail(
      `the console at ${a.consoleUrl} answered HTTP ${status}` +
        (status === 404 ? " (no enrollment API there: check the URL, or upgrade the console)" : "") +
        (text.trim() ? `: ${redactToken(text.trim().slice(0, 200), a.token)}` : ""),
    );
  }
  let out: EnrollOut;
  try {
    // Loose: a field a newer console adds must not fail an enrollment that worked.
    out = EnrollOut.loose().parse(JSON.parse(text));
  } catch {
    return fail(
      `the console at ${a.consoleUrl} answered, but not with an enrollment (is it a Tide console?); ` +
        `the token may be spent: ask for a new one`,
    );
  }
  // The CA goes beside the configuration: the unit cannot read the file it was given from where an
  // operator keeps it (ProtectHome=yes hides /root and /home from the service).
  const installedCa = a.caFile !== null ? path.join(path.dirname(a.configFile), CONSOLE_CA_FILE_NAME) : null;
  const config = enrolledConfig({ ...a, caFile: installedCa }, out);
  try {
    resolveConfig([config]);
  } catch (err) {
    return fail(`the console's answer makes no valid configuration (${(err as Error).message})`);
  }
  try {
    // The token first: a configuration present means the enrollment is complete (the unit's
    // ConditionPathExists waits for it).
    await writeFileAtomic(a.tokenFile, `${out.hostToken}\n`, 0o600);
    if (a.caFile !== null && installedCa !== null && path.resolve(a.caFile) !== installedCa) {
      await writeFileAtomic(installedCa, readFileSync(a.caFile, "utf8"), 0o644);
    }
    await writeFileAtomic(a.configFile, JSON.stringify(config, null, 2) + "\n", 0o644);
  } catch (err) {
    return fail(
      `enrolled as ${out.hostname}, but writing ${a.tokenFile} or ${a.configFile} failed ` +
        `(${redactToken((err as Error).message, out.hostToken)}): the token is spent, ask for a new one`,
    );
  }
  io.stdout(
    `${existing.length > 0 ? "replaced" : "wrote"} ${a.configFile} and ${a.tokenFile} (0600) ` +
      `for the console ${a.consoleUrl} (Tide ${out.consoleVersion})\n`,
  );
  const enrolled = `this host is enrolled as ${out.hostname} with roles ${out.roles.join(", ")}`;
  const unitConfig = io.unitConfigFile ?? DEFAULT_CONFIG_FILE;
  const runHint = `tide-agent run --config ${a.configFile}`;
  if (!a.start) {
    io.stdout(
      `${enrolled}; not started (--no-start): ` +
        (a.configFile === unitConfig ? `systemctl enable --now ${UNIT}` : runHint) +
        " starts it\n",
    );
    return 0;
  }
  if (!existsSync(io.systemdDir ?? SYSTEMD_RUNTIME_DIR)) {
    io.stdout(`${enrolled}; systemd is not running here: start the agent with ${runHint}\n`);
    return 0;
  }
  if (a.configFile !== unitConfig) {
    io.stdout(`${enrolled}; the ${UNIT} unit reads ${unitConfig}, not this file: start it with ${runHint}\n`);
    return 0;
  }
  const run = io.systemctl ?? systemctl;
  for (const args of [
    ["enable", UNIT],
    ["restart", UNIT],
  ]) {
    const r = await run(args);
    if (r.code !== 0)
      return fail(
        `${enrolled}, but \`systemctl ${args.join(" ")}\` failed (exit ${r.code}${r.stderr ? `: ${r.stderr}` : ""}); ` +
          `see journalctl -u ${UNIT}`,
      );
  }
  // What the agent said with READY=1 (systemd/status.ts): reporting, or why it is buffering.
  const said = await run(["show", "--property=StatusText", "--value", UNIT]);
  io.stdout(`${enrolled}; ${UNIT} is running${said.code === 0 && said.stdout ? `: ${said.stdout}` : ""}\n`);
  return 0;
}
