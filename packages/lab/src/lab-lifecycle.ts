/**
 * Bringing the "glb" lab up and down (the Lab handle that drives it is lab.ts).
 *
 * Lifecycle: up() first removes whatever an earlier run left (processes from the state file, every
 * <prefix>-* namespace, EAL runtime directories), then creates namespaces and veths (topology.ts's
 * plan), starts the proxies' test servers and tide-redirect (when built), starts the directors and
 * pushes the all-active table to them, checking every director reports the same content hash.
 * Processes are detached and recorded in the state file, so `npm run lab -- down` from another
 * process (or the next up after a crash) finds and stops them.
 */
import { existsSync } from "node:fs";
import { registerLabFleet, type RegisteredFleet } from "./console/fleet-registration";
import { labEnv, type ConsoleTarget, type LabEnvironment } from "./env";
import { LabError } from "./errors";
import { labPaths, LAB_STATE_VERSION, readStateFile, writeStateFile, type LabStateFile } from "./lab-files";
import { type ProxyStates } from "./lab-table";
import { runCommand } from "./host-command";
import {
  buildGlbTopology,
  buildSetupPlan,
  DEFAULT_PREFIX,
  type GlbTopology,
  type GlbTopologyOptions,
} from "./topology";

import { Lab, DEFAULT_IDLE_SLEEP_US } from "./lab";
import { noLog, removeLab } from "./lab-teardown";

export interface LabOptions extends GlbTopologyOptions {
  /** Tear down and rebuild even when a healthy lab with the same options runs (default false). */
  fresh?: boolean;
  /**
   * Run tide-redirect on the proxies: "auto" (default) when dataplane/build/tide-redirect exists,
   * true to require it, false never. Without it GUE reaches the proxies but is not decapsulated.
   */
  redirect?: boolean | "auto";
  /** Director idle sleep, microseconds (default 100). */
  idleSleepUs?: number;
  /** Proxy states of the first table (default: all active). */
  states?: ProxyStates;
  /**
   * Sysctls per proxy applied before its test server listens (listen() reads somaxconn then), e.g.
   * { prx1: { "net.ipv4.tcp_syncookies": 0, "net.core.somaxconn": 64 } }.
   */
  proxySysctls?: Partial<Record<string, Record<string, string | number>>>;
  /** listen() backlog of the test servers (default 511; capped by net.core.somaxconn). */
  serverBacklog?: number;
  /**
   * Console mode: the console owns the fleet. The lab registers its pool, proxies and directors
   * over REST, starts its directors without a table and one tide-agent per host, which load what
   * the console wants. Null/absent: standalone (the lab builds and pushes its own table).
   */
  console?: ConsoleTarget | null;
  /** Keep a light client load running through the VIP (a background process; down stops it). */
  load?: boolean;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /** Binaries and the state root (default: env.ts). */
  env?: LabEnvironment;
}

/** Options that change what is built: a running lab is reused only if they are equal. */
function buildOptions(o: LabOptions): Record<string, unknown> {
  return {
    prefix: o.prefix ?? null,
    directors: o.directors ?? null,
    proxies: o.proxies ?? null,
    fabricMtu: o.fabricMtu ?? null,
    clientMtu: o.clientMtu ?? null,
    redirect: o.redirect ?? "auto",
    idleSleepUs: o.idleSleepUs ?? DEFAULT_IDLE_SLEEP_US,
    proxySysctls: o.proxySysctls ?? {},
    serverBacklog: o.serverBacklog ?? 511,
    console: o.console?.url ?? null,
    // A lab built before the directors had management links is not reused: it is rebuilt.
    directorMgmt: true,
  };
}

function assertRoot(): void {
  if (typeof process.getuid === "function" && process.getuid() !== 0) {
    throw new LabError("not_root", "the lab needs root (network namespaces, veths, af_packet)");
  }
}

/**
 * The lab's state directory under the lab root: the topology's name (glb) for the default prefix,
 * <name>-<prefix> for another, so a test's lab with its own prefix never reads or removes the state
 * of the lab `npm run up` runs (and the other way round).
 */
export function labDirName(topology: Pick<GlbTopology, "name" | "prefix">): string {
  return topology.prefix === DEFAULT_PREFIX ? topology.name : `${topology.name}-${topology.prefix}`;
}

/** Brings the lab up (or returns the healthy one already running with the same options). */
export async function up(options: LabOptions = {}): Promise<Lab> {
  assertRoot();
  const env = options.env ?? labEnv;
  const log = options.log ?? noLog;
  const topology = buildGlbTopology(options);
  const paths = labPaths(env.labRoot, labDirName(topology));
  if (!existsSync(env.directorBin)) {
    throw new LabError("binary_missing", `${env.directorBin} is missing: make -C dataplane director`);
  }
  const redirectWanted = options.redirect ?? "auto";
  const redirect = redirectWanted === "auto" ? existsSync(env.redirectBin) : redirectWanted;
  if (redirect && !existsSync(env.redirectBin)) {
    throw new LabError("binary_missing", `${env.redirectBin} is missing (redirect: true)`);
  }

  if (!options.fresh) {
    const running = await attach({ ...options, env });
    if (running) {
      const same = JSON.stringify(running.stateSnapshot().options) === JSON.stringify(buildOptions(options));
      if (same && (await running.healthy())) {
        log(`reusing the running ${topology.name} lab`);
        if (options.console) {
          running.useConsole(options.console);
          // Idempotent: finds everything registered and changes nothing (an operator's drain stays).
          const fleet = await registerLabFleet(running.consoleClient(), running.topology, log);
          logChanges(fleet, log);
        }
        if (options.load) await running.startClientLoad();
        return running;
      }
      running.close();
    }
  }
  await removeLab(topology.prefix, paths, log);

  const state: LabStateFile = {
    version: LAB_STATE_VERSION,
    topology: topology.name,
    prefix: topology.prefix,
    options: buildOptions(options),
    createdAt: new Date().toISOString(),
    ownerPid: process.pid,
    ready: false,
    namespaces: topology.namespaces,
    processes: [],
    dpdkPrefixes: [],
    ecmp: topology.directors.map((d) => d.name),
    redirect,
    table: null,
    console: null,
  };
  writeStateFile(paths.stateFile, state);
  const lab = new Lab(topology, paths, env, state);
  try {
    log(`creating ${topology.namespaces.length} namespaces and ${topology.links.length} links`);
    for (const step of buildSetupPlan(topology)) {
      await runCommand(step.argv, { allowFailure: step.allowFailure ?? false });
    }
    for (const [proxy, sysctls] of Object.entries(options.proxySysctls ?? {})) {
      for (const [key, value] of Object.entries(sysctls ?? {})) await lab.setSysctl(proxy, key, value);
    }
    log(
      "starting test servers" +
        (redirect ? " and tide-redirect" : " (tide-redirect not built: no GUE decap)"),
    );
    await Promise.all(
      topology.proxies.map(async (p) => {
        await lab.startTestServer(p.name, options.serverBacklog ?? 511);
        if (redirect) await lab.startRedirect(p.name);
      }),
    );
    if (options.console) {
      lab.useConsole(options.console);
      // The pool's name is what the directors call their table: register before starting them.
      const fleet = await registerLabFleet(lab.consoleClient(), topology, log);
      logChanges(fleet, log);
      lab.recordConsole(options.console, fleet);
      log(`starting ${topology.directors.length} directors (no table: their agents load the console's)`);
      await Promise.all(topology.directors.map((d) => lab.startDirector(d.name, options.idleSleepUs)));
      await lab.startAgents(log);
      const sync = await lab.waitForConsoleSync();
      log(
        `console version ${sync.version} served by ${sync.directors.join(", ")} ` +
          `${(sync.ms / 1000).toFixed(1)} s after the agents started`,
      );
    } else {
      log(`starting ${topology.directors.length} directors`);
      await Promise.all(topology.directors.map((d) => lab.startDirector(d.name, options.idleSleepUs)));
      const table = await lab.pushTable(options.states ?? {});
      log(`table ${table.hash.slice(0, 12)} served by ${Object.keys(table.generations).join(", ")}`);
    }
    if (options.load) await lab.startClientLoad();
    lab.markReady();
    return lab;
  } catch (e) {
    lab.close();
    await removeLab(topology.prefix, paths, log).catch(() => {});
    throw e;
  }
}

/** The running lab from its state file, or null (nothing recorded or the state file is unreadable). */
export async function attach(options: LabOptions = {}): Promise<Lab | null> {
  const env = options.env ?? labEnv;
  const topology = buildGlbTopology(options);
  const paths = labPaths(env.labRoot, labDirName(topology));
  const state = readStateFile(paths.stateFile);
  if (!state || state.prefix !== topology.prefix) return null;
  // Rebuild the topology the lab was made with (directors/proxies counts, MTU), not the caller's.
  const recorded = state.options;
  const built = buildGlbTopology({
    prefix: state.prefix,
    directors: typeof recorded.directors === "number" ? recorded.directors : undefined,
    proxies: typeof recorded.proxies === "number" ? recorded.proxies : undefined,
    fabricMtu: typeof recorded.fabricMtu === "number" ? recorded.fabricMtu : undefined,
    clientMtu: typeof recorded.clientMtu === "number" ? recorded.clientMtu : undefined,
  });
  return new Lab(built, paths, env, state);
}

export interface DownOptions {
  prefix?: string;
  env?: LabEnvironment;
  log?: (line: string) => void;
}

/** Stops every lab process, removes every <prefix>-* namespace and the state directory. */
export async function down(options: DownOptions = {}): Promise<void> {
  assertRoot();
  const env = options.env ?? labEnv;
  const topology = buildGlbTopology({ prefix: options.prefix });
  await removeLab(topology.prefix, labPaths(env.labRoot, labDirName(topology)), options.log ?? noLog);
}

function logChanges(fleet: RegisteredFleet, log: (line: string) => void): void {
  const c = fleet.changes;
  const n = c.poolSettings + c.proxies + c.transitions + c.directors + c.assignments + (c.pool ? 1 : 0);
  if (n === 0)
    log(
      `console: pool ${fleet.poolName} (${fleet.poolId}), its proxies and directors are registered; nothing changed`,
    );
}
