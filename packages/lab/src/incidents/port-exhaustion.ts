/**
 * Incident port-exhaustion: slow connect() from ephemeral port exhaustion, and the IP_LOCAL_PORT_RANGE remedy.
 *
 *   tide-inc-pe-client (lo only): port-sink.py on 127.0.0.1:8084, port-connect.py connecting to it
 *   net.ipv4.ip_local_port_range = 50000 51999 (2,000 ports)
 *
 * The kernel scans even ports first, then odd: once the even half is held each connect() walks
 * it all. trigger({ hold }) holds `hold` connections to the same destination (one port each), then
 * times `measure` more connect() calls (closed with RST, no TIME_WAIT). A full range fails with
 * EADDRNOTAVAIL. remedy() switches the measured sockets to IP_LOCAL_PORT_RANGE (socket option 51)
 * with a random `window`-port slice of the range, so the scan is bounded by the window.
 */
import {
  cleanupStaleNamespaces,
  createNamespace,
  deleteNamespace,
  incidentAsset,
  NamespaceProcess,
  PYTHON,
  requireRoot,
  runJsonHelper,
  setSysctl,
  type IncidentNamespace,
  INCIDENT_PREFIX,
} from "./namespace";

export const PORT_EXHAUSTION_PREFIX = `${INCIDENT_PREFIX}pe-`;

export interface PortExhaustionOptions {
  rangeLow?: number;
  rangeHigh?: number;
  port?: number;
  /** Ports in the random IP_LOCAL_PORT_RANGE window remedy() uses. */
  window?: number;
}

export interface PortExhaustionTrigger {
  /** Connections held (ports taken) while measuring. */
  hold?: number;
  /** connect() calls timed. */
  measure?: number;
  /** Keep the ports held this long after measuring (for an observer), ms. */
  holdMs?: number;
  /** Upper bound of the whole run, ms. */
  maxMs?: number;
}

export interface ConnectLatency {
  held: number;
  hold_errors: Record<string, number>;
  /** Held connections on even local ports (the kernel fills evens first). */
  held_even: number;
  measured: number;
  /** Failed measured connects by errno name (EADDRNOTAVAIL when the range is full). */
  errors: Record<string, number>;
  /** IP_LOCAL_PORT_RANGE window size, 0 = none. */
  window: number;
  median_us: number | null;
  /** 25th percentile: the least noise-sensitive comparison on a busy machine. */
  p25_us: number | null;
  p90_us: number | null;
  mean_us: number | null;
}

export interface PortExhaustionHandle {
  readonly namespaces: { client: IncidentNamespace };
  readonly port: number;
  readonly range: { low: number; high: number };
  trigger(options?: PortExhaustionTrigger): Promise<ConnectLatency>;
  /** From now on measured sockets use a random IP_LOCAL_PORT_RANGE window. */
  remedy(): Promise<void>;
  teardown(): Promise<void>;
}

export async function setup(options: PortExhaustionOptions = {}): Promise<PortExhaustionHandle> {
  requireRoot();
  const port = options.port ?? 8084;
  const range = { low: options.rangeLow ?? 50000, high: options.rangeHigh ?? 51999 };
  const client: IncidentNamespace = {
    name: `${PORT_EXHAUSTION_PREFIX}client`,
    role: "client",
    address: "127.0.0.1",
  };
  await cleanupStaleNamespaces(PORT_EXHAUSTION_PREFIX);
  let sink: NamespaceProcess | null = null;
  const teardown = async () => {
    await sink?.stop();
    await deleteNamespace(client.name);
  };
  try {
    await createNamespace(client.name);
    await setSysctl(client.name, "net.ipv4.ip_local_port_range", `${range.low} ${range.high}`);
    await setSysctl(client.name, "net.core.somaxconn", 8192);
    sink = await NamespaceProcess.start(client.name, [
      PYTHON,
      incidentAsset("port-sink.py"),
      "--host",
      client.address,
      "--port",
      String(port),
    ]);
  } catch (e) {
    await teardown();
    throw e;
  }
  let window = 0;
  return {
    namespaces: { client },
    port,
    range,
    trigger: async (t = {}) => {
      const maxMs = t.maxMs ?? 30_000;
      return runJsonHelper<ConnectLatency>(
        client.name,
        [
          PYTHON,
          incidentAsset("port-connect.py"),
          "--host",
          client.address,
          "--port",
          String(port),
          "--hold",
          String(t.hold ?? 1000),
          "--measure",
          String(t.measure ?? 500),
          "--window",
          String(window),
          "--range-lo",
          String(range.low),
          "--range-hi",
          String(range.high),
          "--hold-ms",
          String(t.holdMs ?? 0),
          "--max-ms",
          String(maxMs),
        ],
        maxMs + 15_000,
      );
    },
    remedy: () => {
      window = options.window ?? 100;
      return Promise.resolve();
    },
    teardown,
  };
}
