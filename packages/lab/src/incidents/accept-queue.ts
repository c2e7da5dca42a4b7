/**
 * Incident accept-queue: accept queue overflow and a capped backlog.
 *
 *   tide-inc-aq-client 10.201.1.2 ──veth── tide-inc-aq-server 10.201.1.1:8081 (slow-acceptor.py)
 *
 * The server asks listen(requestedBacklog) but its namespace's net.core.somaxconn (a new namespace
 * starts at the kernel default, not the host's value) caps it: `ss -ltn` Send-Q shows the cap.
 * The server accepts one connection per acceptIntervalMs; trigger() opens a burst of connections, the
 * queue overflows and TcpExt ListenOverflows/ListenDrops rise in the server namespace.
 * remedy() raises somaxconn and makes the server call listen() again (what a restart would do).
 */
import { LabError } from "../errors";
import { labWaitFor } from "../lab-wait";
import {
  cleanupStaleNamespaces,
  deleteNamespace,
  incidentAsset,
  listenSockets,
  NamespaceProcess,
  PYTHON,
  requireRoot,
  runJsonHelper,
  setSysctl,
  type IncidentNamespace,
  type ListenSocket,
  INCIDENT_PREFIX,
  clientServerNamespaces,
  createClientServerPair,
} from "./namespace";

export const ACCEPT_QUEUE_PREFIX = `${INCIDENT_PREFIX}aq-`;

export interface AcceptQueueOptions {
  /** listen() backlog the server asks for. */
  requestedBacklog?: number;
  /** net.core.somaxconn of the server namespace: the cap. */
  somaxconn?: number;
  /** The server accepts (and closes) one connection per this many milliseconds. */
  acceptIntervalMs?: number;
  /** somaxconn remedy() sets. */
  remedySomaxconn?: number;
  port?: number;
}

export interface AcceptQueueTrigger {
  /** Connections the client tried to open within the burst. */
  count?: number;
  /** How long the client holds them, ms. */
  durationMs?: number;
}

export interface BurstResult {
  attempted: number;
  connected: number;
  errors: Record<string, number>;
}

export interface AcceptQueueHandle {
  readonly namespaces: { client: IncidentNamespace; server: IncidentNamespace };
  /** The subject: the listening port and the server process. */
  readonly port: number;
  readonly serverPid: number;
  trigger(options?: AcceptQueueTrigger): Promise<BurstResult>;
  remedy(): Promise<void>;
  /** The server's LISTEN socket as `ss -ltn` shows it in its namespace. */
  listener(): Promise<ListenSocket>;
  teardown(): Promise<void>;
}

export async function setup(options: AcceptQueueOptions = {}): Promise<AcceptQueueHandle> {
  requireRoot();
  const port = options.port ?? 8081;
  const requestedBacklog = options.requestedBacklog ?? 1024;
  const { client, server } = clientServerNamespaces(ACCEPT_QUEUE_PREFIX, 1);
  await cleanupStaleNamespaces(ACCEPT_QUEUE_PREFIX);
  let proc: NamespaceProcess | null = null;
  const teardown = async () => {
    await proc?.stop();
    await deleteNamespace(client.name);
    await deleteNamespace(server.name);
  };
  try {
    await createClientServerPair(client, server, "aq0");
    await setSysctl(server.name, "net.core.somaxconn", options.somaxconn ?? 10);
    const server_ = await NamespaceProcess.start(server.name, [
      PYTHON,
      incidentAsset("slow-acceptor.py"),
      "--host",
      server.address,
      "--port",
      String(port),
      "--backlog",
      String(requestedBacklog),
      "--accept-interval-ms",
      String(options.acceptIntervalMs ?? 500),
    ]);
    proc = server_;
    return {
      namespaces: { client, server },
      port,
      serverPid: server_.pid,
      trigger: async (t = {}) => {
        const durationMs = t.durationMs ?? 3_000;
        return runJsonHelper<BurstResult>(
          client.name,
          [
            PYTHON,
            incidentAsset("connect-burst.py"),
            "--host",
            server.address,
            "--port",
            String(port),
            "--count",
            String(t.count ?? 300),
            "--duration-ms",
            String(durationMs),
          ],
          durationMs + 15_000,
        );
      },
      remedy: async () => {
        await setSysctl(server.name, "net.core.somaxconn", options.remedySomaxconn ?? 4096);
        const before = server_.lines.length;
        server_.signal("SIGUSR1");
        await labWaitFor(
          "slow-acceptor to re-listen",
          () => server_.lines.slice(before).some((l) => "relisten" in l),
          { timeoutMs: 5_000, intervalMs: 20 },
        );
      },
      listener: async () => {
        const found = (await listenSockets(server.name)).find((l) => l.port === port);
        if (!found) throw new LabError("not_running", `no listener on :${port} in ${server.name}`);
        return found;
      },
      teardown,
    };
  } catch (e) {
    await teardown();
    throw e;
  }
}
