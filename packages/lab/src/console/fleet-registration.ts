/**
 * Registers the lab with a console over REST, idempotently: a second run finds everything by name
 * (pool), address (proxies) and host name (directors) and changes nothing.
 *
 * Order matters for the pool's invariants: proxies are added before any director serves the pool,
 * so they join active (a pool that carries no traffic has no connections to protect) and each
 * join writes a table version; directors are assigned last. A proxy added to a pool that already
 * carries traffic joins inactive and is brought to active through the state machine (fill, then
 * activate), one proxy at a time (a pool may have only one proxy that is not active). Proxies that
 * already exist keep the state the console has for them: an operator's drain is not undone.
 */
import { LabError } from "../errors";
import { type GlbTopology } from "../topology";
import { type ConsoleClient } from "./console-client";
import {
  bindsWithLab,
  CONSOLE_POOL_NAME,
  hashFieldsMatch,
  labHosts,
  labPoolRequest,
  nextActionTowardsActive,
} from "./fleet.plan";

export interface RegisteredFleet {
  poolId: string;
  poolName: string;
  /** Lab node -> its director id (dir1 -> dir_…). */
  directors: Record<string, { hostname: string; directorId: string }>;
  /** Lab node -> its proxy id (prx1 -> prx_…). */
  proxies: Record<string, { hostname: string; proxyId: string }>;
  /** What this run created or changed (all zero / false on a second run). */
  changes: {
    pool: boolean;
    poolSettings: number;
    proxies: number;
    transitions: number;
    directors: number;
    assignments: number;
  };
}

/** Transitions per added proxy: fill + activate (a draining one: activate). */
const MAX_TRANSITIONS_PER_PROXY = 2;

export async function registerLabFleet(
  client: ConsoleClient,
  topology: GlbTopology,
  log: (line: string) => void,
): Promise<RegisteredFleet> {
  const changes = { pool: false, poolSettings: 0, proxies: 0, transitions: 0, directors: 0, assignments: 0 };
  const wanted = labPoolRequest(topology);
  const hosts = labHosts(topology);

  let poolId = (await client.listPools()).find((p) => p.name === CONSOLE_POOL_NAME)?.id;
  if (poolId === undefined) {
    poolId = (await client.createPool(wanted)).id;
    changes.pool = true;
    log(`console: created pool ${CONSOLE_POOL_NAME} (${poolId})`);
  }
  let pool = await client.getPool(poolId);
  const binds = bindsWithLab(pool.binds, wanted.binds);
  if (binds) {
    await client.setBinds(poolId, binds);
    changes.poolSettings++;
    log(`console: pool ${CONSOLE_POOL_NAME}: added the lab's missing binds (the others stay)`);
  }
  if (wanted.hashFields && !hashFieldsMatch(pool.hashFields, wanted.hashFields)) {
    await client.setHashFields(poolId, wanted.hashFields);
    changes.poolSettings++;
    log(`console: pool ${CONSOLE_POOL_NAME}: hash fields set to ${wanted.hashFields.join(", ")}`);
  }

  const added: string[] = [];
  for (const host of hosts.filter((h) => h.role === "proxy")) {
    if (pool.proxies.some((p) => p.address === host.address)) continue;
    const created = await client.addProxy(poolId, { address: host.address!, hostname: host.hostname });
    added.push(created.id);
    changes.proxies++;
    log(`console: added proxy ${host.hostname} ${host.address} (${created.id}, joined ${created.state})`);
  }
  // One proxy at a time: the next may only leave inactive once this one is active.
  for (const proxyId of added) {
    for (let i = 0; ; i++) {
      pool = await client.getPool(poolId);
      const proxy = pool.proxies.find((p) => p.id === proxyId);
      if (!proxy) throw new LabError("console_error", `proxy ${proxyId} vanished from pool ${poolId}`);
      const action = nextActionTowardsActive(proxy.state);
      if (action === null) break;
      if (i >= MAX_TRANSITIONS_PER_PROXY) {
        throw new LabError(
          "console_error",
          `proxy ${proxy.hostname} is still ${proxy.state} after ${i} actions`,
        );
      }
      await client.proxyAction(proxyId, action, "lab: bring a new proxy to active");
      changes.transitions++;
      log(`console: ${action} ${proxy.hostname}`);
    }
  }
  pool = await client.getPool(poolId);
  const proxies: RegisteredFleet["proxies"] = {};
  for (const host of hosts.filter((h) => h.role === "proxy")) {
    const p = pool.proxies.find((x) => x.address === host.address);
    if (!p) throw new LabError("console_error", `pool ${CONSOLE_POOL_NAME} has no proxy at ${host.address}`);
    proxies[host.name] = { hostname: host.hostname, proxyId: p.id };
  }

  const existing = await client.listDirectors();
  const directors: RegisteredFleet["directors"] = {};
  for (const host of hosts.filter((h) => h.role === "director")) {
    let director = existing.find((d) => d.hostname === host.hostname);
    if (!director) {
      const r = await client.registerDirector(host.hostname);
      if (r.created) {
        changes.directors++;
        log(`console: registered director ${host.hostname} (${r.id})`);
      }
      director = { id: r.id, hostname: host.hostname, poolIds: [] };
    }
    if (!director.poolIds.includes(poolId)) {
      await client.assignPool(director.id, poolId);
      changes.assignments++;
      log(`console: ${host.hostname} serves pool ${CONSOLE_POOL_NAME}`);
    }
    directors[host.name] = { hostname: host.hostname, directorId: director.id };
  }
  return { poolId, poolName: CONSOLE_POOL_NAME, directors, proxies, changes };
}
