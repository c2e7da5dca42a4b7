/**
 * Incident syn-queue: SYN queue full, with SYN cookies off (SYNs dropped) or on (cookies sent).
 *
 *   tide-inc-sq-client 10.201.2.2 ──veth── tide-inc-sq-server 10.201.2.1:8082 (listen backlog 16)
 *
 * There is no netem here, so trigger() keeps handshakes half-open by dropping the server's SYN-ACKs
 * in the client namespace (nft input rule), then opens a burst of connections: the server's SYN
 * queue (bounded by the listen backlog) fills with SYN_RECV requests. With net.ipv4.tcp_syncookies=0
 * further SYNs are dropped (TcpExt TCPReqQFullDrop, "Possible SYN flooding ... Dropping request");
 * with 1 they get a cookie (TCPReqQFullDoCookies, SyncookiesSent). remedy() enables cookies (and,
 * when asked, raises the backlog). tcp_synack_retries=1 in the server makes requests expire in ~3 s.
 */
import { LabError } from "../errors";
import { runInNamespace } from "../host-command";
import {
  cleanupStaleNamespaces,
  deleteNamespace,
  incidentAsset,
  listenSockets,
  NamespaceProcess,
  nftApply,
  PYTHON,
  requireRoot,
  runJsonHelper,
  setSysctl,
  type IncidentNamespace,
  INCIDENT_PREFIX,
  clientServerNamespaces,
  createClientServerPair,
} from "./namespace";
import type { BurstResult } from "./accept-queue";

export const SYN_QUEUE_PREFIX = `${INCIDENT_PREFIX}sq-`;
/** The nft table trigger() adds to the client namespace while it runs. */
export const SYN_QUEUE_NFT_TABLE = "tide_inc_synack_drop";

export interface SynQueueOptions {
  /** listen() backlog: also the SYN queue bound. */
  backlog?: number;
  /** net.ipv4.tcp_syncookies of the server namespace at setup (0 = drop when full). */
  syncookies?: 0 | 1 | 2;
  port?: number;
}

export interface SynQueueTrigger {
  count?: number;
  durationMs?: number;
}

export interface SynQueueRemedy {
  /** Set tcp_syncookies to 1 (default true). */
  cookies?: boolean;
  /** Raise somaxconn and re-listen with this backlog (default: keep it). */
  backlog?: number;
}

export interface SynQueueHandle {
  readonly namespaces: { client: IncidentNamespace; server: IncidentNamespace };
  readonly port: number;
  readonly serverPid: number;
  trigger(options?: SynQueueTrigger): Promise<BurstResult>;
  remedy(options?: SynQueueRemedy): Promise<void>;
  /** Requests in SYN_RECV on the server port now (`ss -tn state syn-recv`). */
  synRecvCount(): Promise<number>;
  teardown(): Promise<void>;
}

export async function setup(options: SynQueueOptions = {}): Promise<SynQueueHandle> {
  requireRoot();
  const port = options.port ?? 8082;
  const backlog = options.backlog ?? 16;
  const { client, server } = clientServerNamespaces(SYN_QUEUE_PREFIX, 2);
  await cleanupStaleNamespaces(SYN_QUEUE_PREFIX);
  let proc: NamespaceProcess | null = null;
  const teardown = async () => {
    await proc?.stop();
    await deleteNamespace(client.name);
    await deleteNamespace(server.name);
  };
  try {
    await createClientServerPair(client, server, "sq0");
    await setSysctl(server.name, "net.ipv4.tcp_syncookies", options.syncookies ?? 0);
    await setSysctl(server.name, "net.ipv4.tcp_synack_retries", 1);
    // The client gives up quickly too: its SYN retries would otherwise outlive the trigger.
    await setSysctl(client.name, "net.ipv4.tcp_syn_retries", 1);
    const started = await NamespaceProcess.start(server.name, [
      PYTHON,
      incidentAsset("slow-acceptor.py"),
      "--host",
      server.address,
      "--port",
      String(port),
      "--backlog",
      String(backlog),
      "--accept-interval-ms",
      "50",
    ]);
    proc = started;
  } catch (e) {
    await teardown();
    throw e;
  }
  const dropSynAck = async (on: boolean) => {
    await runInNamespace(client.name, ["nft", `delete table inet ${SYN_QUEUE_NFT_TABLE}`], {
      allowFailure: true,
    });
    if (!on) return;
    await nftApply(
      client.name,
      `add table inet ${SYN_QUEUE_NFT_TABLE}; ` +
        `add chain inet ${SYN_QUEUE_NFT_TABLE} in { type filter hook input priority 0; policy accept; }; ` +
        `add rule inet ${SYN_QUEUE_NFT_TABLE} in ip saddr ${server.address} tcp sport ${port} ` +
        `tcp flags & (syn | ack) == (syn | ack) counter drop`,
    );
  };
  let serverProc = proc;
  return {
    namespaces: { client, server },
    port,
    get serverPid() {
      return serverProc.pid;
    },
    trigger: async (t = {}) => {
      const durationMs = t.durationMs ?? 2_000;
      await dropSynAck(true);
      try {
        return await runJsonHelper<BurstResult>(
          client.name,
          [
            PYTHON,
            incidentAsset("connect-burst.py"),
            "--host",
            server.address,
            "--port",
            String(port),
            "--count",
            String(t.count ?? 200),
            "--duration-ms",
            String(durationMs),
          ],
          durationMs + 15_000,
        );
      } finally {
        await dropSynAck(false);
      }
    },
    remedy: async (r = {}) => {
      if (r.cookies ?? true) await setSysctl(server.name, "net.ipv4.tcp_syncookies", 1);
      if (r.backlog !== undefined) {
        await setSysctl(server.name, "net.core.somaxconn", Math.max(r.backlog, 4096));
        await serverProc.stop();
        serverProc = await NamespaceProcess.start(server.name, [
          PYTHON,
          incidentAsset("slow-acceptor.py"),
          "--host",
          server.address,
          "--port",
          String(port),
          "--backlog",
          String(r.backlog),
          "--accept-interval-ms",
          "50",
        ]);
        proc = serverProc;
        const l = (await listenSockets(server.name)).find((s) => s.port === port);
        if (!l) throw new LabError("not_running", `no listener on :${port} after remedy`);
      }
    },
    synRecvCount: async () => {
      const { stdout } = await runInNamespace(server.name, [
        "ss",
        "-tnH",
        "state",
        "syn-recv",
        `sport = :${port}`,
      ]);
      return stdout.split("\n").filter((l) => l.trim().length > 0).length;
    },
    teardown: async () => {
      await teardown();
    },
  };
}
