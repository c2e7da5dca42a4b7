/**
 * The Lab handle scenarios drive the "glb" lab with: commands and sysctls in its namespaces, links,
 * the forwarding table, the console fleet and the agents, background load. Its directors are
 * lab-directors.ts and its proxies lab-proxies.ts (Lab hands their methods out); bringing a lab up
 * and down is lab-lifecycle.ts; what status() reports and how is lab-status.ts.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { type DirectorCounters } from "@tide/contracts";
import { type ProxyState } from "@tide/forwarding";
import { ClientDriver, CLIENT_DRIVER_SCRIPT } from "./client-driver";
import { type DirectorControl } from "./director-control";
import { ConsoleClient } from "./console/console-client";
import { labHosts, type LabHost } from "./console/fleet.plan";
import { type RegisteredFleet } from "./console/fleet-registration";
import { issueHostToken, labAgentConfig, labAgentFiles } from "./console/lab-agents";
import { type ConsoleTarget, type LabEnvironment } from "./env";
import { LabError } from "./errors";
import { writeFileAtomic, type LabConsoleState, type LabPaths, type LabStateFile } from "./lab-files";
import { isAlive, respawn, spawnDetached, stopProcess, type LabProcessRecord } from "./lab-process";
import { resolveRestartName } from "./lab-restart";
import { buildLabTable, LAB_POOL, type ProxyHealth, type ProxyStates, type VipPrefix } from "./lab-table";
import { checkNewVip, parseVip, vipAddPlan, vipRemovePlan, type LabVipRecord } from "./lab-vips";
import { labWaitFor } from "./lab-wait";
import { runCommand, type CommandResult, type RunOptions } from "./host-command";
import { type NetCounters } from "./net-counters";
import { type RedirectControl } from "./redirect-control";
import { linkNamed, proxyNode, type GlbTopology } from "./topology";
import { noLog, removeLab } from "./lab-teardown";
import { LabDirectors } from "./lab-directors";
import { LabProxies } from "./lab-proxies";
import { LabRuntime } from "./lab-runtime";
import {
  consoleSyncStatus,
  labHealthy,
  labStatus,
  type ConsoleSyncStatus,
  type LabStatus,
} from "./lab-status";

export { DEFAULT_IDLE_SLEEP_US } from "./lab-directors";
export { TEST_SERVER_SCRIPT } from "./lab-proxies";
export const CLIENT_LOAD_SCRIPT = fileURLToPath(new URL("../assets/client-load.mjs", import.meta.url));
/**
 * Console mode: from the agents' start to every director serving the console's table, ms. Measured
 * here: 3-6 s (agent start ~1 s, hello, desired-state poll, download, load); the margin is for a
 * busy 2-core machine.
 */
export const CONSOLE_SYNC_TIMEOUT_MS = 60_000;
/** An agent that exits this soon after starting has refused its configuration, ms. */
const AGENT_SETTLE_MS = 500;
/**
 * The background load's streams end after at most this long, s (each after a random lifetime in
 * [half of it, all of it]; a new stream replaces it at once): an operator who drains a lab proxy
 * sees its established connections reach zero within it.
 */
export const DEFAULT_STREAM_LIFETIME_S = 30;
/** Stream connections the background load keeps open. */
export const DEFAULT_LOAD_STREAMS = 4;

export interface ClientLoadOptions {
  /** Stream connections kept open (default DEFAULT_LOAD_STREAMS). */
  streams?: number;
  /** Longest life of one stream, s (default DEFAULT_STREAM_LIFETIME_S; 0: streams never end). */
  streamLifetimeS?: number;
}
export interface PushTableResult {
  /** Content hash every running director now reports for the pool. */
  hash: string;
  states: Record<string, ProxyState>;
  /** Table generation per director that loaded it. */
  generations: Record<string, number>;
}

export class Lab {
  readonly topology: GlbTopology;
  readonly paths: LabPaths;
  private readonly env: LabEnvironment;
  private readonly state: LabStateFile;
  private readonly rt: LabRuntime;
  private readonly directorParts: LabDirectors;
  private readonly proxyParts: LabProxies;
  private readonly drivers = new Set<ClientDriver>();
  /** Console mode: where to register and the admin token (never saved); set by up() or useConsole. */
  private consoleTarget: ConsoleTarget | null = null;
  private client: ConsoleClient | null = null;

  /** Use up() or attach(). */
  constructor(topology: GlbTopology, paths: LabPaths, env: LabEnvironment, state: LabStateFile) {
    this.topology = topology;
    this.paths = paths;
    this.env = env;
    this.state = state;
    this.rt = new LabRuntime(topology, paths, env, state);
    this.directorParts = new LabDirectors(this.rt);
    this.proxyParts = new LabProxies(this.rt);
  }

  // ------------------------------------------------------------------------------------------------
  // Names and addresses

  get vip(): string {
    return this.topology.vip;
  }

  /** Director names (dir1, dir2, ...). */
  get directors(): string[] {
    return this.directorParts.names;
  }

  /** Proxy names (prx1, prx2, ...). */
  get proxies(): string[] {
    return this.topology.proxies.map((p) => p.name);
  }

  /** What the directors call the lab's table: LAB_POOL, or the console's pool name in console mode. */
  get poolName(): string {
    return this.rt.poolName;
  }

  /** Whether tide-redirect runs on the proxies (GUE is decapsulated, connections work). */
  get redirectEnabled(): boolean {
    return this.state.redirect;
  }

  /** Proxy name by address (10.100.12.2 -> prx2), e.g. for a director's explain reply. */
  proxyByAddress(address: string): string | undefined {
    return this.topology.proxies.find((p) => p.address === address)?.name;
  }

  /** A copy of the state file's content. */
  stateSnapshot(): LabStateFile {
    return structuredClone(this.state);
  }

  // ------------------------------------------------------------------------------------------------
  // Commands in namespaces

  /** Runs argv inside a node's namespace (client, router, dir1, prx2, or a full namespace name). */
  exec(node: string, argv: readonly string[], options: RunOptions = {}): Promise<CommandResult> {
    return this.rt.exec(node, argv, options);
  }

  async setSysctl(node: string, key: string, value: string | number): Promise<void> {
    if (!/^[a-z0-9_.\-/]+$/i.test(key)) throw new LabError("bad_argument", `bad sysctl key ${key}`);
    await this.exec(node, ["sysctl", "-qw", `${key}=${value}`]);
  }

  async getSysctl(node: string, key: string): Promise<string> {
    return (await this.exec(node, ["sysctl", "-n", key])).stdout.trim();
  }

  /**
   * Common proxy tunables. somaxconn applies to listen() calls made afterwards: restart the test
   * server (restartTestServer) for its listeners to pick it up.
   */
  async setProxySysctls(
    proxy: string,
    values: { tcpSyncookies?: 0 | 1 | 2; somaxconn?: number; tcpMaxSynBacklog?: number },
  ) {
    proxyNode(this.topology, proxy);
    if (values.tcpSyncookies !== undefined)
      await this.setSysctl(proxy, "net.ipv4.tcp_syncookies", values.tcpSyncookies);
    if (values.somaxconn !== undefined) await this.setSysctl(proxy, "net.core.somaxconn", values.somaxconn);
    if (values.tcpMaxSynBacklog !== undefined) {
      await this.setSysctl(proxy, "net.ipv4.tcp_max_syn_backlog", values.tcpMaxSynBacklog);
    }
  }

  /** /proc/net/snmp + /proc/net/netstat as seen inside a node's namespace. */
  async netCounters(node: string): Promise<NetCounters> {
    return this.rt.netCounters(node);
  }

  /**
   * Sets the MTU of a router link (client, dir1, prx2): by default only the router's end, so the
   * router must send ICMP frag-needed for bigger packets (the PMTU scenario); "peer" or "both" too.
   */
  async setLinkMtu(link: string, mtu: number, side: "router" | "peer" | "both" = "router"): Promise<void> {
    if (!Number.isInteger(mtu) || mtu < 68 || mtu > 65535)
      throw new LabError("bad_argument", `bad MTU ${mtu}`);
    const l = linkNamed(this.topology, link);
    const ends = side === "both" ? [l.router, l.peer] : [side === "router" ? l.router : l.peer];
    for (const end of ends) {
      await runCommand(["ip", "-n", end.namespace, "link", "set", "dev", end.ifname, "mtu", String(mtu)]);
    }
  }

  /** The MTU of a router link, router side and peer side. */
  async linkMtu(link: string): Promise<{ router: number; peer: number }> {
    const l = linkNamed(this.topology, link);
    const read = async (ns: string, ifname: string) => {
      const { stdout } = await runCommand(["ip", "-n", ns, "-j", "link", "show", "dev", ifname]);
      const parsed = JSON.parse(stdout) as { mtu?: number }[];
      return parsed[0]?.mtu ?? 0;
    };
    return {
      router: await read(l.router.namespace, l.router.ifname),
      peer: await read(l.peer.namespace, l.peer.ifname),
    };
  }

  // ------------------------------------------------------------------------------------------------
  // The forwarding table

  /**
   * Builds the table for these proxy states (omitted proxies: active; omitted health: healthy),
   * writes it atomically, loads it on every running director and checks each reports its hash.
   */
  async pushTable(states: ProxyStates = {}, health: ProxyHealth = {}): Promise<PushTableResult> {
    if (this.state.console) {
      throw new LabError(
        "bad_argument",
        `the console at ${this.state.console.url} owns this lab's tables: change proxies there (REST or the console)`,
      );
    }
    const table = buildLabTable(this.topology, states, health, this.tableVips());
    writeFileAtomic(this.paths.tableFile, table.bytes);
    const generations: Record<string, number> = {};
    const mismatches: Record<string, string> = {};
    const running = this.runningDirectors();
    await Promise.all(
      running.map(async (name) => {
        const result = await this.directorControl(name).loadTable(this.paths.tableFile, [LAB_POOL]);
        const pool = result.pools.find((p) => p.name === LAB_POOL);
        generations[name] = result.generation;
        if (pool?.content_hash !== table.hash) mismatches[name] = pool?.content_hash ?? "none";
      }),
    );
    if (Object.keys(mismatches).length > 0) {
      throw new LabError("hash_mismatch", `directors serve another table than ${table.hash}`, {
        expected: table.hash,
        mismatches,
      });
    }
    this.state.table = { hash: table.hash, states: table.states, health: table.health };
    this.save();
    return { hash: table.hash, states: table.states, generations };
  }

  /** The table last pushed (hash and states), or null. */
  get table(): LabStateFile["table"] {
    return this.state.table ? structuredClone(this.state.table) : null;
  }

  /** The content hash each running director reports for the lab's pool (null: none loaded). */
  tableHashes(): Promise<Record<string, string | null>> {
    return this.directorParts.tableHashes();
  }

  // ------------------------------------------------------------------------------------------------
  // Directors (lab-directors.ts)

  /** Directors whose process runs. */
  runningDirectors(): string[] {
    return this.directorParts.running();
  }

  /** Directors the router's VIP route points at. */
  get ecmp(): string[] {
    return this.directorParts.ecmp;
  }

  /** Puts a director into the router's ECMP route for the VIP, or takes it out. */
  setDirectorEcmp(name: string, inEcmp: boolean): Promise<string[]> {
    return this.directorParts.setEcmp(name, inEcmp);
  }

  /** Starts a director (if not running), waits for its socket, loads the current table. */
  startDirector(name: string, idleSleepUs?: number): Promise<void> {
    return this.directorParts.start(name, idleSleepUs);
  }

  /**
   * Stops a director (SIGTERM; it removes its socket). The router still sends it its share of
   * flows unless setDirectorEcmp(name, false) took it out: that is the "director died" case.
   */
  stopDirector(name: string): Promise<void> {
    return this.directorParts.stop(name);
  }

  /** Typed control client of a director (one connection, reused; contract-validated replies). */
  directorControl(name: string): DirectorControl {
    return this.directorParts.control(name);
  }

  /** Counters of every running director, summed (what reached the proxies in total). */
  directorTotals(): Promise<Record<string, DirectorCounters>> {
    return this.directorParts.totals();
  }

  // ------------------------------------------------------------------------------------------------
  // Proxies (lab-proxies.ts)

  /** Control client of a proxy's tide-redirect; not_running when the lab runs without it. */
  redirectControl(proxy: string): RedirectControl {
    return this.proxyParts.redirectControl(proxy);
  }

  /** @internal used by up(); starts tide-redirect on a proxy's veth and waits for its socket. */
  startRedirect(proxy: string): Promise<void> {
    return this.proxyParts.startRedirect(proxy);
  }

  /** @internal used by up(); starts a proxy's test server and waits for its "ready" line. */
  startTestServer(proxy: string, backlog = 511): Promise<void> {
    return this.proxyParts.startTestServer(proxy, backlog);
  }

  /** Restarts a proxy's test server (after changing somaxconn; its connections are reset). */
  restartTestServer(proxy: string, backlog?: number): Promise<void> {
    return this.proxyParts.restartTestServer(proxy, backlog);
  }

  // ------------------------------------------------------------------------------------------------
  // Client

  /** Starts a client driver in the client namespace; stop it with driver.stop() (down() does too). */
  async clientDriver(): Promise<ClientDriver> {
    const driver = new ClientDriver(
      ["ip", "netns", "exec", this.topology.client.namespace, this.env.nodeBin, CLIENT_DRIVER_SCRIPT],
      {
        host: this.topology.vip,
        port: this.topology.ports.stream,
        httpBase: `http://${this.topology.vip}:${this.topology.ports.http}`,
      },
    );
    this.drivers.add(driver);
    await driver.started();
    return driver;
  }

  // ------------------------------------------------------------------------------------------------
  // Restarting one process (`npm run lab -- restart`)

  /** The recorded processes' names (state file keys): what restartProcess takes. */
  get processNames(): string[] {
    return this.state.processes.map((p) => p.key);
  }

  /**
   * Restarts one recorded process (crashed or not) with the command, working directory and
   * environment it was started with, waits until it is ready (a director: its socket and its
   * table; tide-redirect: its socket; a test server: its ready line; an agent or the load: still
   * running after AGENT_SETTLE_MS) and records its new pid, so status reports it running. The other
   * processes are not touched. `name`: a key, or a console host name (resolveRestartName).
   */
  async restartProcess(name: string): Promise<{ key: string; oldPid: number; pid: number; ms: number }> {
    const key = resolveRestartName(name, this.processNames, labHosts(this.topology));
    const old = this.rt.process(key)!;
    const t0 = Date.now();
    let rec: LabProcessRecord;
    switch (old.kind) {
      case "director":
        rec = await this.directorParts.restart(key);
        if (this.state.console) await this.waitForDirectorTable(key);
        break;
      case "redirect":
        rec = await this.proxyParts.restartRedirect(old.node);
        break;
      case "test-server":
        rec = await this.proxyParts.restartServer(old.node);
        break;
      case "agent":
      case "client-load":
        // Their helpers (tide-probes, tide-nsdiag) are in their process group: they go too.
        await stopProcess(old, 5_000, true);
        rec = this.rt.record(respawn(this.withLaunchContext(old)));
        await sleep(AGENT_SETTLE_MS);
        if (!isAlive(rec)) throw this.rt.startFailure(rec, new LabError("process_exited", `${key} exited`));
        break;
    }
    return { key, oldPid: old.pid, pid: rec.pid, ms: Date.now() - t0 };
  }

  /**
   * An agent recorded before records kept cwd and env (a lab brought up by an older checkout) gets
   * what startAgent gives one: its files' directory and a clean environment (the agent reads
   * TIDE_* variables over its file, so the CLI's own must not leak into it).
   */
  private withLaunchContext(rec: LabProcessRecord): LabProcessRecord {
    if (rec.kind !== "agent" || rec.cwd !== undefined) return rec;
    const host = labHosts(this.topology).find((h) => h.name === rec.node);
    if (!host) return rec;
    return {
      ...rec,
      cwd: labAgentFiles(this.paths.dir, host.hostname).dir,
      env: { PATH: this.env.searchPath, LANG: "C" },
    };
  }

  /** Console mode: until a restarted director serves the pool again (its agent reloads it). */
  private async waitForDirectorTable(name: string): Promise<void> {
    const pool = this.rt.poolName;
    await labWaitFor(
      `${name} to serve pool ${pool} again (its agent loads it)`,
      async () => {
        const status = await this.directorControl(name).status();
        return status.pools.some((p) => p.name === pool && p.content_hash !== null);
      },
      { timeoutMs: CONSOLE_SYNC_TIMEOUT_MS, intervalMs: 250 },
    );
  }

  // ------------------------------------------------------------------------------------------------
  // Added VIPs (`npm run lab -- vip add|remove|list`; lab-vips.ts)

  /** VIPs added beside the lab's own, with the pool each is for. */
  get addedVips(): LabVipRecord[] {
    return structuredClone(this.state.vips ?? []);
  }

  /**
   * Routes a new VIP (an address or a prefix) in the lab: the router's route towards the
   * directors in the ECMP route, the prefix on every proxy's lo. Standalone, the lab's table gets
   * its binds (HTTP and stream ports, like the lab's VIP) and is pushed, so it carries traffic at
   * once; in console mode the bind is the console's to make (pool `pool`, default the lab's).
   * Idempotent: adding a VIP again re-applies its routing and returns "exists".
   */
  async addVip(
    text: string,
    options: { pool?: string } = {},
  ): Promise<{ vip: LabVipRecord; added: boolean }> {
    const vip = parseVip(text);
    const pool = options.pool ?? this.poolName;
    if (!this.state.console && pool !== LAB_POOL) {
      throw new LabError(
        "bad_argument",
        `a standalone lab has one pool, ${LAB_POOL}: --pool ${pool} needs a lab in console mode`,
      );
    }
    const existing = this.state.vips ?? [];
    const found = checkNewVip(this.topology, existing, vip);
    const prior = existing.find((v) => v.cidr === vip.cidr);
    if (prior && prior.pool !== pool) {
      throw new LabError("bad_argument", `VIP ${vip.cidr} was added for pool ${prior.pool}: remove it first`);
    }
    for (const step of vipAddPlan(this.topology, vip, this.state.ecmp)) await runCommand(step.argv);
    const record = { cidr: vip.cidr, pool };
    if (found === "new") {
      this.state.vips = [...existing, record];
      this.save();
    }
    if (!this.state.console && this.state.table) {
      await this.pushTable(this.state.table.states, this.state.table.health);
    }
    return { vip: record, added: found === "new" };
  }

  /** Undoes addVip (route, lo addresses, standalone: its binds). Removing an unknown VIP is refused. */
  async removeVip(text: string): Promise<LabVipRecord> {
    const vip = parseVip(text);
    const record = (this.state.vips ?? []).find((v) => v.cidr === vip.cidr);
    if (!record) {
      throw new LabError(
        "bad_argument",
        `VIP ${vip.cidr} was not added with vip add; added: ${this.addedVips.map((v) => v.cidr).join(", ") || "none"}`,
      );
    }
    for (const step of vipRemovePlan(this.topology, vip)) {
      await runCommand(step.argv, { allowFailure: step.allowFailure ?? false });
    }
    this.state.vips = (this.state.vips ?? []).filter((v) => v.cidr !== vip.cidr);
    this.save();
    if (!this.state.console && this.state.table) {
      await this.pushTable(this.state.table.states, this.state.table.health);
    }
    return record;
  }

  /** Added VIPs whose binds the lab's own table carries (standalone: every one). */
  private tableVips(): VipPrefix[] {
    return (this.state.vips ?? []).filter((v) => v.pool === LAB_POOL).map((v) => parseVip(v.cidr));
  }

  // ------------------------------------------------------------------------------------------------
  // Status and teardown

  /** Whether every namespace exists, every process runs and every running director answers. */
  healthy(): Promise<boolean> {
    return labHealthy(this.rt, this.directorParts);
  }

  status(): Promise<LabStatus> {
    return labStatus(this.rt, {
      directors: this.directorParts,
      proxies: this.proxyParts,
      consoleSync: () => this.consoleSync(),
    });
  }

  // ------------------------------------------------------------------------------------------------
  // Console mode

  /** Whether a console owns this lab's fleet (it was brought up with `console`). */
  get consoleState(): LabConsoleState | null {
    return this.state.console ? structuredClone(this.state.console) : null;
  }

  /** The console and token to use from this handle (up() sets it; `lab status` passes its flags). */
  useConsole(target: ConsoleTarget): void {
    this.consoleTarget = target;
    this.client = new ConsoleClient(target.url, target.token);
  }

  /**
   * The REST client for the lab's console. Without useConsole(), the token file the lab was
   * brought up with is read again (the token itself is never stored).
   */
  consoleClient(): ConsoleClient {
    if (this.client) return this.client;
    const c = this.state.console;
    if (!c) throw new LabError("bad_argument", "this lab runs standalone (no console)");
    if (c.tokenFile === null) {
      throw new LabError(
        "bad_argument",
        "no API token for the console: pass --token-file PATH or set TIDE_API_TOKEN",
      );
    }
    let token: string;
    try {
      token = readFileSync(c.tokenFile, "utf8").trim();
    } catch (e) {
      throw new LabError(
        "bad_argument",
        `cannot read the API token file ${c.tokenFile}: ${(e as Error).message}`,
      );
    }
    this.useConsole({ url: c.url, token, tokenFile: c.tokenFile });
    return this.client!;
  }

  /** @internal used by up(): what registration found or created. */
  recordConsole(target: ConsoleTarget, fleet: RegisteredFleet): void {
    this.state.console = {
      url: target.url,
      tokenFile: target.tokenFile,
      poolId: fleet.poolId,
      poolName: fleet.poolName,
      directors: fleet.directors,
      proxies: fleet.proxies,
    };
    this.save();
  }

  /** @internal used by up(): a host token and a tide-agent per director and proxy host. */
  async startAgents(log: (line: string) => void = noLog): Promise<void> {
    if (!existsSync(this.env.agentBundle)) {
      throw new LabError(
        "binary_missing",
        `${this.env.agentBundle} is missing: npm run build -w @tide/agent`,
      );
    }
    const client = this.consoleClient();
    const hosts = labHosts(this.topology);
    let revoked = 0;
    for (const host of hosts)
      revoked += (await issueHostToken(client, host.hostname, labAgentFiles(this.paths.dir, host.hostname)))
        .revoked;
    log(
      `created ${hosts.length} host tokens (files mode 600 under ${path.join(this.paths.dir, "agents")})` +
        (revoked > 0 ? `; revoked ${revoked} left by earlier runs` : ""),
    );
    const records = hosts.map((host) => this.startAgent(host));
    await sleep(AGENT_SETTLE_MS);
    for (const rec of records) {
      if (!isAlive(rec)) throw this.rt.startFailure(rec, new LabError("process_exited", `${rec.key} exited`));
    }
    log(`started ${records.length} agents (${hosts.map((h) => h.hostname).join(", ")})`);
  }

  private startAgent(host: LabHost): LabProcessRecord {
    const files = labAgentFiles(this.paths.dir, host.hostname);
    const socket =
      host.role === "director"
        ? this.paths.directorSocket(host.name)
        : this.state.redirect
          ? this.paths.redirectSocket(host.name)
          : null;
    const config = labAgentConfig({
      host,
      consoleUrl: this.consoleClient().url,
      files,
      socket,
      probesBinary: existsSync(this.env.probesBin) ? this.env.probesBin : null,
      nsdiagBinary: existsSync(this.env.nsdiagBin) ? this.env.nsdiagBin : null,
      healthcheckBinary: existsSync(this.env.healthcheckBin) ? this.env.healthcheckBin : null,
    });
    writeFileSync(files.config, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    return this.rt.record(
      spawnDetached(
        {
          key: `${host.name}.agent`,
          kind: "agent",
          node: host.name,
          argv: [this.env.nodeBin, this.env.agentBundle, "--config", files.config],
          log: files.log,
        },
        files.dir,
        // A clean environment: the agent reads TIDE_* variables over its file (TIDE_HOSTNAME, ...).
        { PATH: this.env.searchPath, LANG: "C" },
      ),
    );
  }

  /** The console's view of the lab's directors (GET /api/v1/sync); errors are reported, not thrown. */
  async consoleSync(): Promise<ConsoleSyncStatus | null> {
    const c = this.state.console;
    return c ? consoleSyncStatus(c, () => this.consoleClient()) : null;
  }

  /**
   * Waits until every lab director serves the lab pool's current version (GET /api/v1/sync);
   * resolves with that version, the directors and the time it took, ms.
   */
  async waitForConsoleSync(
    timeoutMs = CONSOLE_SYNC_TIMEOUT_MS,
  ): Promise<{ version: number; directors: string[]; ms: number }> {
    const t0 = Date.now();
    let last: ConsoleSyncStatus | null = null;
    for (;;) {
      last = await this.consoleSync();
      if (last?.inSync) {
        return {
          version: last.directors[0]!.desiredVersion!,
          directors: last.directors.map((d) => d.hostname),
          ms: Date.now() - t0,
        };
      }
      const deadAgent = this.state.processes.find((p) => p.kind === "agent" && !isAlive(p));
      if (deadAgent)
        throw this.rt.startFailure(deadAgent, new LabError("process_exited", `${deadAgent.key} exited`));
      if (Date.now() - t0 > timeoutMs) {
        const states = (last?.directors ?? [])
          .map(
            (d) =>
              `${d.hostname} ${d.state} served v${d.servedVersion ?? "-"} desired v${d.desiredVersion ?? "-"}${d.error ? ` (${d.error})` : ""}`,
          )
          .join("; ");
        throw new LabError(
          "not_in_sync",
          `directors not in sync with the console after ${timeoutMs} ms: ${states || last?.error || "no answer"}`,
          {
            agentLogs: this.state.processes.filter((p) => p.kind === "agent").map((p) => p.log),
          },
        );
      }
      await sleep(250);
    }
  }

  // ------------------------------------------------------------------------------------------------
  // Background client load

  /**
   * Starts the light client load (assets/client-load.mjs in the client namespace: a few stream
   * connections and a trickle of new HTTP connections through the VIP) unless it runs already.
   * Each stream ends after a random lifetime in [streamLifetimeS / 2, streamLifetimeS] and a new
   * one replaces it at once: the offered load stays steady, and a drained proxy's established
   * connections reach zero within streamLifetimeS (0: streams never end).
   */
  async startClientLoad(options: ClientLoadOptions = {}): Promise<void> {
    const key = "client.load";
    const existing = this.rt.process(key);
    if (existing && isAlive(existing)) return;
    const lifetimeS = options.streamLifetimeS ?? DEFAULT_STREAM_LIFETIME_S;
    const streams = options.streams ?? DEFAULT_LOAD_STREAMS;
    if (!Number.isFinite(lifetimeS) || lifetimeS < 0) {
      throw new LabError("bad_argument", `stream lifetime must be >= 0 s (0: endless), got ${lifetimeS}`);
    }
    if (!Number.isInteger(streams) || streams < 1 || streams > 10_000) {
      throw new LabError("bad_argument", `streams must be 1..10000, got ${streams}`);
    }
    const rec = this.rt.record(
      spawnDetached({
        key,
        kind: "client-load",
        node: "client",
        argv: [
          "ip",
          "netns",
          "exec",
          this.topology.client.namespace,
          this.env.nodeBin,
          CLIENT_LOAD_SCRIPT,
          "--host",
          this.topology.vip,
          "--stream-port",
          String(this.topology.ports.stream),
          "--http-port",
          String(this.topology.ports.http),
          "--streams",
          String(streams),
          "--stream-lifetime-s",
          String(lifetimeS),
        ],
        log: this.paths.log(key),
      }),
    );
    await sleep(AGENT_SETTLE_MS);
    if (!isAlive(rec)) throw this.rt.startFailure(rec, new LabError("process_exited", `${key} exited`));
  }

  async stopClientLoad(): Promise<void> {
    const rec = this.rt.process("client.load");
    if (!rec) return;
    await stopProcess(rec, 5_000, true);
    this.rt.forget("client.load");
  }

  /** Closes this handle's sockets and client drivers; the lab keeps running. */
  close(): void {
    this.directorParts.close();
    this.proxyParts.close();
  }

  /** Stops the client drivers, then removes the whole lab (processes, namespaces, state). */
  async down(options: { log?: (line: string) => void } = {}): Promise<void> {
    await Promise.all([...this.drivers].map((d) => d.stop().catch(() => {})));
    this.drivers.clear();
    this.close();
    await removeLab(this.topology.prefix, this.paths, options.log ?? noLog);
  }

  /** @internal */
  markReady(): void {
    this.state.ready = true;
    this.save();
  }

  private save(): void {
    this.rt.save();
  }
}
