/**
 * Test and benchmark support: the lab in console mode against the real console, from nothing. The
 * console on a throwaway database (console-stack.ts) with an admin API token, then `up` of the lab
 * in console mode under its own prefix and lab root in a temporary directory. close() removes all
 * of it (lab, console, database, directory), whatever got started, and says if namespaces with the
 * prefix were left behind. Shared by console-fleet.lab-test.ts, proxy-health.lab-test.ts and
 * bench/health-failover.bench.ts. Needs root, dataplane/build (tide-director, tide-redirect,
 * tide-healthcheck), the agent bundle and the console build.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type z } from "zod";
import { waitFor } from "@tide/devstack";
import { labEnv, type ConsoleTarget, type LabEnvironment } from "../env";
import { listNamespaces } from "../host-command";
import { type Lab } from "../lab";
import { up } from "../lab-lifecycle";
import { ConsoleClient } from "./console-client";
import { everyStep, startConsoleStack, type ConsoleStack } from "./console-stack";
import { labAgentFiles } from "./lab-agents";

/** waitFor (@tide/devstack) every 100 ms; a timeout says what `last()` saw last. */
export function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  last?: () => unknown,
): Promise<T> {
  const detail = last ? () => `last seen: ${JSON.stringify(last())}` : undefined;
  return waitFor(what, probe, { timeoutMs, ...(detail && { detail }) }) as Promise<T>;
}

export interface ConsoleLabOptions {
  /** Namespace prefix of the lab (its own, so it never meets another run's lab). */
  prefix: string;
  /** Start of the temporary directory's name (under os.tmpdir()). */
  tmpName: string;
  log: (line: string) => void;
}

export class ConsoleLab {
  private stack: ConsoleStack | undefined;
  private labHandle: Lab | undefined;
  private dirPath: string | undefined;
  private targetValue: ConsoleTarget | undefined;
  private envValue: LabEnvironment | undefined;

  private constructor(private readonly options: ConsoleLabOptions) {}

  /**
   * Checks what the lab needs (root, binaries, builds, no namespaces with the prefix), then starts
   * PostgreSQL and the console. On failure, whatever was started is removed before it throws.
   */
  static async start(options: ConsoleLabOptions): Promise<ConsoleLab> {
    if (process.getuid?.() !== 0)
      throw new Error("the lab tier needs root (network namespaces); CI runs it as root");
    for (const [file, how] of [
      [labEnv.directorBin, "make -C dataplane"],
      [labEnv.redirectBin, "make -C dataplane"],
      [labEnv.healthcheckBin, "make -C dataplane"],
      [labEnv.agentBundle, "npm run build -w @tide/agent"],
    ] as const) {
      if (!existsSync(file)) throw new Error(`${file} is missing: ${how}`);
    }
    if ((await listNamespaces()).some((n) => n.startsWith(`${options.prefix}-`))) {
      throw new Error(
        `namespaces ${options.prefix}-* exist: another run with this prefix is going on or crashed`,
      );
    }
    const h = new ConsoleLab(options);
    try {
      await h.startConsole();
    } catch (e) {
      await h.close().catch(() => {});
      throw e;
    }
    return h;
  }

  private async startConsole(): Promise<void> {
    const dir = (this.dirPath = mkdtempSync(path.join(tmpdir(), this.options.tmpName)));
    this.envValue = { ...labEnv, labRoot: path.join(dir, "lab") };
    const stack = (this.stack = await startConsoleStack());
    const token = (await stack.api.tokens.create({ name: "lab", scopes: [...stack.adminScopes] })).token;
    const tokenFile = path.join(dir, "lab-token");
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    this.targetValue = { url: stack.url, token, tokenFile };
  }

  get target(): ConsoleTarget {
    if (!this.targetValue) throw new Error("the console is not started");
    return this.targetValue;
  }

  get env(): LabEnvironment {
    if (!this.envValue) throw new Error("the console is not started");
    return this.envValue;
  }

  /** The lab, once up() returned. */
  get lab(): Lab | undefined {
    return this.labHandle;
  }

  client(): ConsoleClient {
    return new ConsoleClient(this.target.url, this.target.token);
  }

  /** `up` of the lab in console mode under the prefix (removed by close(), even if up fails). */
  async up(): Promise<Lab> {
    const t0 = Date.now();
    const { prefix, log } = this.options;
    this.labHandle = await up({ prefix, console: this.target, env: this.env, log });
    log(`lab up in console mode in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return this.labHandle;
  }

  /** The console's REST API for what ConsoleClient does not cover; replies parsed by the contract. */
  async rest<T>(method: string, p: string, schema: z.ZodType<T>, body?: unknown): Promise<T> {
    const res = await fetch(`${this.target.url}/api/v1${p}`, {
      method,
      headers: {
        authorization: `Bearer ${this.target.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} /api/v1${p}: HTTP ${res.status} ${text.slice(0, 500)}`);
    return schema.parse(JSON.parse(text));
  }

  /** The tails of the given hosts' agent logs and of the console's output (for a failure). */
  diagnostics(hostnames: readonly string[]): string {
    const parts: string[] = [];
    const labDir = this.labHandle?.paths.dir;
    if (labDir) {
      for (const h of hostnames) {
        const file = labAgentFiles(labDir, h).log;
        let text: string;
        try {
          text = readFileSync(file, "utf8");
        } catch {
          text = "(no log)";
        }
        parts.push(`--- ${file} (tail) ---\n${text.slice(-3000)}`);
      }
    }
    parts.push(`--- console output (tail) ---\n${this.stack?.output().slice(-3000) ?? ""}`);
    return parts.join("\n");
  }

  /**
   * Removes everything, each step whatever the others did: the lab (its processes and namespaces),
   * the console, the database, the temporary directory. Throws the first error, after all steps.
   */
  async close(): Promise<void> {
    const { labHandle, stack, dirPath } = this;
    this.labHandle = this.stack = this.dirPath = undefined;
    await everyStep([
      () => labHandle?.down(),
      () => stack?.close(),
      () => dirPath && rmSync(dirPath, { recursive: true, force: true }),
      async () => {
        const left = (await listNamespaces()).filter((n) => n.startsWith(`${this.options.prefix}-`));
        if (left.length > 0) throw new Error(`namespaces left behind: ${left.join(", ")}`);
      },
    ]);
  }
}
