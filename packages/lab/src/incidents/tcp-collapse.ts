/**
 * Incident tcp-collapse: tcp_collapse (receive-queue pruning) with a large tcp_rmem.
 *
 *   tide-inc-tc-client 10.201.6.2 ──veth── tide-inc-tc-server 10.201.6.1:8086 (slow-reader.py)
 *
 * Offloads are off (GRO would merge the segments). The server's net.ipv4.tcp_rmem max is 32 MiB;
 * the reader drains its sockets only every readIntervalMs, and trigger() sends 1-byte writes with
 * TCP_NODELAY over a few connections: the receive queue fills with tiny skbs, the kernel prunes it
 * and collapses them (TcpExt PruneCalled, TCPRcvCollapsed, in the server namespace), each time
 * inside softirq. remedy() lowers tcp_rmem (max 1 MiB by default): measured here, prunes become
 * far rarer but collapsing does not stop (it bounds the work per collapse, not its occurrence).
 */
import {
  cleanupStaleNamespaces,
  deleteNamespace,
  getSysctl,
  incidentAsset,
  NamespaceProcess,
  PYTHON,
  requireRoot,
  runJsonHelper,
  setSysctl,
  type IncidentNamespace,
  INCIDENT_PREFIX,
  clientServerNamespaces,
  createClientServerPair,
} from "./namespace";

export const TCP_COLLAPSE_PREFIX = `${INCIDENT_PREFIX}tc-`;

export interface TcpCollapseOptions {
  /** net.ipv4.tcp_rmem of the server at setup ("min default max", bytes). */
  rmem?: string;
  /** tcp_rmem remedy() sets. */
  remedyRmem?: string;
  /** The reader drains each socket once per this many ms. */
  readIntervalMs?: number;
  port?: number;
}

export interface TcpCollapseTrigger {
  durationMs?: number;
  /** Bytes per write (1 = the most skbs per byte). */
  writeSize?: number;
  connections?: number;
}

export interface TcpCollapseHandle {
  readonly namespaces: { client: IncidentNamespace; server: IncidentNamespace };
  readonly port: number;
  readonly readerPid: number;
  trigger(options?: TcpCollapseTrigger): Promise<{ sent: number; writes: number }>;
  remedy(): Promise<void>;
  /** The server namespace's tcp_rmem now. */
  rmem(): Promise<string>;
  teardown(): Promise<void>;
}

export async function setup(options: TcpCollapseOptions = {}): Promise<TcpCollapseHandle> {
  requireRoot();
  const port = options.port ?? 8086;
  const { client, server } = clientServerNamespaces(TCP_COLLAPSE_PREFIX, 6);
  await cleanupStaleNamespaces(TCP_COLLAPSE_PREFIX);
  let reader: NamespaceProcess | null = null;
  const teardown = async () => {
    await reader?.stop();
    await deleteNamespace(client.name);
    await deleteNamespace(server.name);
  };
  try {
    await createClientServerPair(client, server, "tc0");
    await setSysctl(server.name, "net.ipv4.tcp_rmem", options.rmem ?? "4096 131072 33554432");
    reader = await NamespaceProcess.start(server.name, [
      PYTHON,
      incidentAsset("slow-reader.py"),
      "--host",
      server.address,
      "--port",
      String(port),
      "--interval-ms",
      String(options.readIntervalMs ?? 2_000),
      "--chunk",
      String(64 * 1024 * 1024),
    ]);
  } catch (e) {
    await teardown();
    throw e;
  }
  const readerPid = reader.pid;
  return {
    namespaces: { client, server },
    port,
    readerPid,
    trigger: async (t = {}) => {
      const durationMs = t.durationMs ?? 3_000;
      return runJsonHelper<{ sent: number; writes: number }>(
        client.name,
        [
          PYTHON,
          incidentAsset("small-writer.py"),
          "--host",
          server.address,
          "--port",
          String(port),
          "--size",
          String(t.writeSize ?? 1),
          "--conns",
          String(t.connections ?? 4),
          "--duration-ms",
          String(durationMs),
        ],
        durationMs + 15_000,
      );
    },
    remedy: async () => {
      await setSysctl(server.name, "net.ipv4.tcp_rmem", options.remedyRmem ?? "4096 131072 1048576");
    },
    rmem: () => getSysctl(server.name, "net.ipv4.tcp_rmem"),
    teardown,
  };
}
