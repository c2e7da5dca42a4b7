/**
 * Incident listener-crowding: many listeners on one port (listening hash crowding).
 *
 *   tide-inc-lc-server: many-listeners.py holds `count` LISTEN sockets on :53, each bound to its own
 *   address 10.207.X.Y (net.ipv4.ip_nonlocal_bind=1, so no addresses need configuring)
 *
 * Before 4.17 the listening hash had 32 buckets keyed by port only: all of them sit in one chain that
 * every SYN/RST walks. Newer kernels also hash by address, but a per-(netns, port) listener count
 * in the thousands is still the finding (`ss -ltnH` in the namespace). trigger() starts the listeners
 * for a bounded lifetime; remedy() replaces them with one wildcard listener.
 */
import {
  cleanupStaleNamespaces,
  createNamespace,
  deleteNamespace,
  incidentAsset,
  listenSockets,
  NamespaceProcess,
  PYTHON,
  requireRoot,
  setSysctl,
  type IncidentNamespace,
  INCIDENT_PREFIX,
} from "./namespace";

export const LISTENER_CROWDING_PREFIX = `${INCIDENT_PREFIX}lc-`;

export interface ListenerCrowdingOptions {
  port?: number;
}

export interface ListenerCrowdingTrigger {
  /** LISTEN sockets on the port (one address each). */
  count?: number;
  /** The helper exits after this long even if nobody stops it, ms. */
  lifetimeMs?: number;
}

export interface ListenerCrowdingHandle {
  readonly namespaces: { server: IncidentNamespace };
  readonly port: number;
  /** The process holding the listeners (null before trigger()). */
  readonly listenerPid: number | null;
  trigger(options?: ListenerCrowdingTrigger): Promise<void>;
  remedy(): Promise<void>;
  /** LISTEN sockets per port in the namespace, from `ss -ltnH`. */
  listenersByPort(): Promise<Map<number, number>>;
  teardown(): Promise<void>;
}

export async function setup(options: ListenerCrowdingOptions = {}): Promise<ListenerCrowdingHandle> {
  requireRoot();
  const port = options.port ?? 53;
  const server: IncidentNamespace = {
    name: `${LISTENER_CROWDING_PREFIX}server`,
    role: "server",
    address: "10.207.0.1",
  };
  await cleanupStaleNamespaces(LISTENER_CROWDING_PREFIX);
  let proc: NamespaceProcess | null = null;
  const teardown = async () => {
    await proc?.stop();
    proc = null;
    await deleteNamespace(server.name);
  };
  try {
    await createNamespace(server.name);
    await setSysctl(server.name, "net.ipv4.ip_nonlocal_bind", 1);
  } catch (e) {
    await teardown();
    throw e;
  }
  const start = async (args: string[], lifetimeMs: number) => {
    await proc?.stop();
    proc = await NamespaceProcess.start(
      server.name,
      [
        PYTHON,
        incidentAsset("many-listeners.py"),
        "--port",
        String(port),
        "--lifetime-ms",
        String(lifetimeMs),
        ...args,
      ],
      30_000,
    );
  };
  return {
    namespaces: { server },
    port,
    get listenerPid() {
      return proc?.pid ?? null;
    },
    trigger: async (t = {}) => {
      await start(["--count", String(t.count ?? 16_000)], t.lifetimeMs ?? 120_000);
    },
    remedy: async () => {
      await start(["--wildcard"], 120_000);
    },
    listenersByPort: async () => {
      const counts = new Map<number, number>();
      for (const l of await listenSockets(server.name)) counts.set(l.port, (counts.get(l.port) ?? 0) + 1);
      return counts;
    },
    teardown,
  };
}
