/**
 * Where a lab keeps its files (under <labRoot>/<topology>/, e.g. .tide/lab/glb/), the state file
 * that lets `down` (or the next `up`) find everything a run created even after a crash, and the
 * commands and configuration files of the processes (pure).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { LabError } from "./errors";
import { LabProcessRecord } from "./lab-process";
import { LAB_HASH_FIELDS, LAB_POOL } from "./lab-table";
import { type DirectorNode, type GlbTopology, type ProxyNode } from "./topology";

/** UNIX socket paths must fit sockaddr_un.sun_path (108 bytes, NUL included). */
const SUN_PATH_MAX = 107;

export interface LabPaths {
  dir: string;
  stateFile: string;
  tableFile: string;
  directorConfig(name: string): string;
  directorSocket(name: string): string;
  redirectSocket(name: string): string;
  log(key: string): string;
}

export function labPaths(labRoot: string, topologyName: string): LabPaths {
  const dir = path.join(labRoot, topologyName);
  const socket = (file: string) => {
    const p = path.join(dir, file);
    if (Buffer.byteLength(p) > SUN_PATH_MAX) {
      throw new LabError("bad_argument", `socket path too long for a UNIX socket (${p.length} bytes): ${p}`);
    }
    return p;
  };
  return {
    dir,
    stateFile: path.join(dir, "state.json"),
    tableFile: path.join(dir, "forwarding.bin"),
    directorConfig: (name) => path.join(dir, `${name}.json`),
    directorSocket: (name) => socket(`${name}.sock`),
    redirectSocket: (name) => socket(`${name}.redirect.sock`),
    log: (key) => path.join(dir, `${key}.log`),
  };
}

// ---------------------------------------------------------------------------------------------------
// State file

export const LAB_STATE_VERSION = 1;

const ProxyStateName = z.enum(["active", "draining", "inactive", "filling"]);

export const LabConsoleState = z
  .strictObject({
    url: z.string().describe("Console base URL"),
    tokenFile: z
      .string()
      .nullable()
      .describe(
        "File holding the admin API token (never the token itself); null: it came from TIDE_API_TOKEN",
      ),
    poolId: z.string().describe("The lab's pool in the console"),
    poolName: z.string().describe("Its name: what the directors call the table"),
    directors: z
      .record(z.string(), z.strictObject({ hostname: z.string(), directorId: z.string() }))
      .describe("Lab director -> its host name and director id"),
    proxies: z
      .record(z.string(), z.strictObject({ hostname: z.string(), proxyId: z.string() }))
      .describe("Lab proxy -> its host name and proxy id"),
  })
  .describe("The console a lab in console mode registered with");
export type LabConsoleState = z.infer<typeof LabConsoleState>;

export const LabStateFile = z
  .strictObject({
    version: z.literal(LAB_STATE_VERSION),
    topology: z.string().describe("Topology name (glb)"),
    prefix: z.string().describe("Namespace prefix (tide-glb)"),
    options: z.record(z.string(), z.unknown()).describe("The topology options the lab was built with"),
    createdAt: z.iso.datetime().describe("When up started"),
    ownerPid: z.int().describe("Process that ran up"),
    ready: z.boolean().describe("up finished: every process runs and every director serves the table"),
    namespaces: z.array(z.string()).describe("Namespaces created (removed by down)"),
    processes: z.array(LabProcessRecord).describe("Processes started and still expected to run"),
    dpdkPrefixes: z.array(z.string()).describe("EAL --file-prefix values used (their /var/run/dpdk dirs)"),
    ecmp: z.array(z.string()).describe("Directors the router's VIP route points at"),
    redirect: z.boolean().describe("tide-redirect runs on the proxies"),
    table: z
      .strictObject({
        hash: z.string(),
        states: z.record(z.string(), ProxyStateName),
        health: z.record(z.string(), z.boolean()),
      })
      .nullable()
      .describe("The table last pushed"),
    console: LabConsoleState.nullable()
      .optional()
      .describe("Console mode: the console that owns the fleet (null/absent: standalone, the lab pushes)"),
    vips: z
      .array(
        z.strictObject({
          cidr: z.string().describe("The VIP's network address and prefix (10.200.0.20/32)"),
          pool: z.string().describe("The pool it is for: the lab's own table, or a console pool"),
        }),
      )
      .optional()
      .describe("VIPs added with `lab vip add`, beside the lab's own (absent: none)"),
  })
  .describe("What a lab run created: enough for down to remove it from any process");
export type LabStateFile = z.infer<typeof LabStateFile>;

export function readStateFile(file: string): LabStateFile | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return null;
  }
  try {
    const parsed = LabStateFile.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Writes a file so that readers see the old or the new content, never a part (rename is atomic). */
export function writeFileAtomic(file: string, data: string | Uint8Array): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, data);
  renameSync(tmp, file);
}

export function writeStateFile(file: string, state: LabStateFile): void {
  writeFileAtomic(file, `${JSON.stringify(state, null, 2)}\n`);
}

// ---------------------------------------------------------------------------------------------------
// Process commands and configuration (pure)

export interface DirectorLaunch {
  /** The director's JSON configuration file content. */
  config: Record<string, unknown>;
  argv: string[];
  filePrefix: string;
}

export interface DirectorLaunchOptions {
  directorBin: string;
  /** dataplane/tests/support/test-director: adds the no-hugepage, no-PCI EAL options. */
  directorLauncher: string;
  paths: LabPaths;
  /** Sleep after an empty poll, microseconds: two directors must not eat both CPUs. */
  idleSleepUs: number;
  /** Distinguishes this run's EAL runtime directories (/var/run/dpdk/<prefix>). */
  runId: string;
  tableFile: string | null;
  /** The name the director calls its one table (default LAB_POOL; the console's pool name in console mode). */
  poolName?: string;
}

/** tide-director in its namespace on af_packet, through the test launcher (no hugepages, no PCI), one lcore. */
export function directorLaunch(
  topology: GlbTopology,
  director: DirectorNode,
  options: DirectorLaunchOptions,
): DirectorLaunch {
  const filePrefix = `${topology.prefix}-${director.name}-${options.runId}`;
  const configFile = options.paths.directorConfig(director.name);
  const config: Record<string, unknown> = {
    control_socket: options.paths.directorSocket(director.name),
    pool_names: [options.poolName ?? LAB_POOL],
    hash_fields: [...LAB_HASH_FIELDS],
    gateway_mac: director.gatewayMac,
    source_ip: director.address,
    mtu: topology.directorMtu,
    idle_sleep_us: options.idleSleepUs,
  };
  if (options.tableFile) config.table_file = options.tableFile;
  const argv = [
    "ip",
    "netns",
    "exec",
    director.namespace,
    options.directorLauncher,
    options.directorBin,
    `--file-prefix=${filePrefix}`,
    "-l",
    String(director.lcore),
    `--vdev=net_af_packet0,iface=${director.ifname}`,
    "--",
    "--config",
    configFile,
  ];
  return { config, argv, filePrefix };
}

/** tide-redirect on a proxy's veth: it enters the namespace itself (--netns). */
export function redirectArgv(
  topology: GlbTopology,
  proxy: ProxyNode,
  redirectBin: string,
  paths: LabPaths,
): string[] {
  return [
    redirectBin,
    "--iface",
    proxy.ifname,
    "--netns",
    proxy.namespace,
    "--local",
    proxy.address,
    "--port",
    String(topology.ports.gue),
    "--socket",
    paths.redirectSocket(proxy.name),
  ];
}

export interface TestServerOptions {
  nodeBin: string;
  script: string;
  /** listen() backlog of both servers (the kernel caps it at net.core.somaxconn). */
  backlog: number;
}

/** The proxy's test server (plain .mjs, no tsx): HTTP and the stream service on the VIP. */
export function testServerArgv(
  topology: GlbTopology,
  proxy: ProxyNode,
  options: TestServerOptions,
): string[] {
  return [
    "ip",
    "netns",
    "exec",
    proxy.namespace,
    options.nodeBin,
    options.script,
    "--name",
    proxy.name,
    "--host",
    "0.0.0.0",
    "--http-port",
    String(topology.ports.http),
    "--stream-port",
    String(topology.ports.stream),
    "--backlog",
    String(options.backlog),
  ];
}
