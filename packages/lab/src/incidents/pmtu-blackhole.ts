/**
 * Incident pmtu-blackhole: path MTU blackhole, and an MTU mismatch on one L2 link.
 *
 *   tide-inc-pm-client 10.201.31.2 ─1500─ tide-inc-pm-ra ─1200─ tide-inc-pm-rb ─9000─ tide-inc-pm-server
 *                      10.201.31.0/24         10.201.32.0/24         10.201.33.0/24 (server 10.201.33.2)
 *
 * Offloads are off on every veth (GSO would hide the mismatch) and tcp_mtu_probing is 0. Router ra
 * must send ICMP frag-needed (type 3 code 4, mtu 1200) for a 1400-byte DF packet; trigger() installs
 * an nft rule in ra's output hook that drops exactly those, so large DF probes vanish silently while
 * small ones work (ra's Icmp OutDestUnreachs / IcmpMsg OutType3 still count: it "tried to send").
 * With `mismatch`, the server's end of the 9000 link is left at 1500: big frames from rb are
 * dropped by the receiving veth with no ICMP at all. remedy() deletes the rule and aligns the MTU.
 */
import { runCommand, runInNamespace } from "../host-command";
import {
  addVeth,
  cleanupStaleNamespaces,
  createNamespace,
  deleteNamespace,
  nftApply,
  requireRoot,
  setSysctl,
  type IncidentNamespace,
  INCIDENT_PREFIX,
} from "./namespace";

export const PMTU_PREFIX = `${INCIDENT_PREFIX}pm-`;
/** The nft table trigger() adds to router ra. */
export const PMTU_NFT_TABLE = "tide_inc_pmtu";

export interface PmtuOptions {
  /** MTU of the ra-rb link (the smaller inner link), bytes. */
  innerMtu?: number;
  /** MTU of the rb-server link, bytes. */
  serverLinkMtu?: number;
  /** Leave the server's end of the rb-server link at 1500 (MTU mismatch on one L2 link). */
  mismatch?: boolean;
}

export interface PingResult {
  transmitted: number;
  received: number;
  /** ping's error lines (e.g. "Frag needed and DF set (mtu = 1200)"); empty for a blackhole. */
  errors: string[];
  /** pmtu reported by an error line, when there is one. */
  reportedMtu: number | null;
}

export interface TracepathResult {
  output: string;
  /** The final pmtu from the footer ("Resume: pmtu N" / "Too many hops: pmtu N"). */
  pmtu: number | null;
  reached: boolean;
}

export interface PmtuHandle {
  readonly namespaces: {
    client: IncidentNamespace;
    routerA: IncidentNamespace;
    routerB: IncidentNamespace;
    server: IncidentNamespace;
  };
  /** Installs the ICMP frag-needed drop rule on router ra (and lowers nothing else). */
  trigger(): Promise<void>;
  remedy(): Promise<void>;
  /** `ping -M do -s SIZE` from a namespace (default the client) to the server. */
  ping(size: number, options?: { from?: string; count?: number; target?: string }): Promise<PingResult>;
  tracepath(options?: { maxHops?: number }): Promise<TracepathResult>;
  /** Forgets learned path MTUs in the client (so each check starts from the link MTU). */
  flushPmtuCache(): Promise<void>;
  teardown(): Promise<void>;
}

export function parsePing(text: string): PingResult {
  const m = /(\d+) packets transmitted, (\d+) received/.exec(text);
  const errors = text
    .split("\n")
    .filter((l) => /Frag needed|message too long|local error/i.test(l))
    .map((l) => l.trim());
  const mtu = /mtu[ =]+(\d+)/i.exec(errors.join("\n"));
  return {
    transmitted: Number(m?.[1] ?? 0),
    received: Number(m?.[2] ?? 0),
    errors,
    reportedMtu: mtu ? Number(mtu[1]) : null,
  };
}

export function parseTracepath(text: string): TracepathResult {
  const footer = /(?:Resume|Too many hops): pmtu (\d+)/.exec(text);
  return { output: text, pmtu: footer ? Number(footer[1]) : null, reached: /reached/.test(text) };
}

export async function setup(options: PmtuOptions = {}): Promise<PmtuHandle> {
  requireRoot();
  const innerMtu = options.innerMtu ?? 1200;
  const serverLinkMtu = options.serverLinkMtu ?? 9000;
  const ns = {
    client: { name: `${PMTU_PREFIX}client`, role: "client", address: "10.201.31.2" },
    routerA: { name: `${PMTU_PREFIX}ra`, role: "router", address: "10.201.31.1" },
    routerB: { name: `${PMTU_PREFIX}rb`, role: "router", address: "10.201.32.2" },
    server: { name: `${PMTU_PREFIX}server`, role: "server", address: "10.201.33.2" },
  } satisfies Record<string, IncidentNamespace>;
  await cleanupStaleNamespaces(PMTU_PREFIX);
  const all = Object.values(ns).map((n) => n.name);
  const teardown = async () => {
    for (const n of all) await deleteNamespace(n);
  };
  try {
    for (const n of all) await createNamespace(n);
    await addVeth(
      { namespace: ns.client.name, ifname: "pm0", cidr: "10.201.31.2/24", mtu: 1500 },
      { namespace: ns.routerA.name, ifname: "pm-client", cidr: "10.201.31.1/24", mtu: 1500 },
    );
    await addVeth(
      { namespace: ns.routerA.name, ifname: "pm-rb", cidr: "10.201.32.1/24", mtu: innerMtu },
      { namespace: ns.routerB.name, ifname: "pm-ra", cidr: "10.201.32.2/24", mtu: innerMtu },
    );
    await addVeth(
      { namespace: ns.routerB.name, ifname: "pm-server", cidr: "10.201.33.1/24", mtu: serverLinkMtu },
      {
        namespace: ns.server.name,
        ifname: "pm0",
        cidr: "10.201.33.2/24",
        mtu: options.mismatch ? 1500 : serverLinkMtu,
      },
    );
    for (const n of all) await setSysctl(n, "net.ipv4.tcp_mtu_probing", 0);
    for (const r of [ns.routerA.name, ns.routerB.name]) await setSysctl(r, "net.ipv4.ip_forward", 1);
    await runInNamespace(ns.client.name, ["ip", "route", "add", "default", "via", "10.201.31.1"]);
    await runInNamespace(ns.server.name, ["ip", "route", "add", "default", "via", "10.201.33.1"]);
    await runInNamespace(ns.routerA.name, ["ip", "route", "add", "10.201.33.0/24", "via", "10.201.32.2"]);
    await runInNamespace(ns.routerB.name, ["ip", "route", "add", "10.201.31.0/24", "via", "10.201.32.1"]);
  } catch (e) {
    await teardown();
    throw e;
  }
  const ping = async (
    size: number,
    o: { from?: string; count?: number; target?: string } = {},
  ): Promise<PingResult> => {
    const count = o.count ?? 3;
    const r = await runInNamespace(
      o.from ?? ns.client.name,
      [
        "ping",
        "-n",
        "-M",
        "do",
        "-s",
        String(size),
        "-c",
        String(count),
        "-i",
        "0.2",
        "-W",
        "1",
        o.target ?? ns.server.address,
      ],
      { allowFailure: true, timeoutMs: 5_000 + count * 1_500 },
    );
    return parsePing(`${r.stdout}\n${r.stderr}`);
  };
  return {
    namespaces: ns,
    trigger: async () => {
      await nftApply(ns.routerA.name, `delete table inet ${PMTU_NFT_TABLE}`).catch(() => undefined);
      await nftApply(
        ns.routerA.name,
        `add table inet ${PMTU_NFT_TABLE}; ` +
          `add chain inet ${PMTU_NFT_TABLE} out { type filter hook output priority 0; policy accept; }; ` +
          `add rule inet ${PMTU_NFT_TABLE} out icmp type destination-unreachable icmp code frag-needed counter drop`,
      );
    },
    remedy: async () => {
      await runInNamespace(ns.routerA.name, ["nft", `delete table inet ${PMTU_NFT_TABLE}`], {
        allowFailure: true,
      });
      if (options.mismatch)
        await runInNamespace(ns.server.name, ["ip", "link", "set", "pm0", "mtu", String(serverLinkMtu)]);
    },
    ping,
    tracepath: async (o = {}) => {
      const maxHops = o.maxHops ?? 6;
      const r = await runCommand(
        [
          "ip",
          "netns",
          "exec",
          ns.client.name,
          "env",
          "LC_ALL=C",
          "tracepath",
          "-n",
          "-m",
          String(maxHops),
          ns.server.address,
        ],
        { allowFailure: true, timeoutMs: 5_000 + maxHops * 4_000 },
      );
      return parseTracepath(r.stdout);
    },
    flushPmtuCache: async () => {
      await runInNamespace(ns.client.name, ["ip", "route", "flush", "cache"]);
    },
    teardown,
  };
}
