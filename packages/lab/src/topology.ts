/**
 * The "glb" lab topology as plain data (pure: no I/O), and the commands that build it.
 *
 *   client ── router ──┬── dir1 eth0: tide-director on af_packet, no kernel address (10.100.2.2)
 *   10.100.1.2         │       mgmt0: 10.100.21.2, the host's own stack (default route)
 *                      ├── dir2 eth0 (10.100.3.2), mgmt0 10.100.22.2
 *                      ├── prx1 10.100.11.2 (VIP on lo, tide-redirect, test server)
 *                      ├── prx2 10.100.12.2
 *                      └── prx3 10.100.13.2
 *
 * The router sends the VIP over ECMP (L4 hash) to the directors' addresses, which resolve through
 * permanent neighbour entries to the directors' veth MACs; a director encapsulates to the router's
 * MAC, the router forwards the GUE packet to the proxy, and the proxy answers the client directly
 * (direct server return) through the router. Every veth gets a fixed MAC, so a director's
 * configuration can be computed before anything exists.
 *
 * Management links: a director host also has a kernel network stack, like a real director's
 * management NIC. A second veth per director (router end dir<d>-mgmt 10.100.<20+d>.1/24, director
 * end mgmt0 10.100.<20+d>.2/24, the director namespace's default route) carries what the host's
 * kernel sends: the agent's health checks (tide-healthcheck's GUE-wrapped ICMP echo, TCP, HTTP to
 * the proxies' own addresses), whose answers the proxies' kernels route back to 10.100.<20+d>.2.
 * The af_packet port (eth0) keeps no address, and the director namespace does not forward, so the
 * kernel drops what it sees there without answering; VIP traffic never touches a management link.
 */
import { GUE_PORT, gueIpOverhead } from "@tide/contracts";
import { LabError } from "./errors";

export const GLB_TOPOLOGY = "glb";
export const DEFAULT_PREFIX = "tide-glb";
/** The VIP every proxy serves (on lo) and the router sends to the directors. */
export const LAB_VIP = "10.200.0.10";
/** GUE destination port (GLB's; declared once in @tide/contracts). */
export { GUE_PORT };
/** Test server ports on the VIP: HTTP, and the name-then-echo stream service. */
export const HTTP_PORT = 80;
export const STREAM_PORT = 9000;
/** Bytes GUE adds to a client packet: outer IPv4 20 + UDP 8 + GUE 4 + GLB private data 4 + one hop 4. */
export const GUE_OVERHEAD = gueIpOverhead(1);
/**
 * Largest outer IP packet a director emits, bytes. DPDK's af_packet PMD refuses frames above 1518
 * bytes (1500 + Ethernet header + CRC), so the lab's directors cannot use jumbo frames the way GLB's
 * do on real NICs; the director never fragments, so client packets must leave room for GUE.
 */
export const DIRECTOR_MTU = 1500;
/** MTU of the links between the router and the directors and proxies, bytes. */
export const FABRIC_MTU = 1500;
/**
 * MTU of the client's link, bytes: the largest client packet that still fits the director's MTU
 * once encapsulated (1500 - 40). The client's SYN then advertises MSS 1420, and the proxies send at
 * most 1460-byte packets back, so lowering a router link's MTU below that exercises real PMTU.
 */
export const CLIENT_MTU = DIRECTOR_MTU - GUE_OVERHEAD;
/** Offloads switched off on every lab veth: af_packet must see complete checksums, MTUs must be real. */
export const OFFLOADS_OFF = ["tx", "off", "rx", "off", "gso", "off", "tso", "off", "gro", "off"] as const;
/** A director namespace's management interface (its kernel's own address; not the af_packet port). */
export const MGMT_IFNAME = "mgmt0";
/** Director d's management subnet is 10.100.(MGMT_SUBNET_BASE + d).0/24. */
const MGMT_SUBNET_BASE = 20;
/** Linux limits interface names to 15 bytes; network namespace names to a file name. */
const IFNAME_MAX = 15;

export interface LabEndpoint {
  namespace: string;
  ifname: string;
  mac: string;
  /** Address with prefix (10.100.1.1/24), or null (a director's af_packet port has none). */
  cidr: string | null;
}

/**
 * A veth pair between the router and one node; named after the node (client, dir1, prx2), or
 * dir1-mgmt for a director host's management link. The name is the router's interface.
 */
export interface LabLink {
  name: string;
  router: LabEndpoint;
  peer: LabEndpoint;
  mtu: number;
}

export interface ClientNode {
  name: "client";
  namespace: string;
  ifname: string;
  address: string;
  gateway: string;
}

export interface DirectorNode {
  name: string;
  namespace: string;
  /** The veth the director's af_packet port uses (no kernel address). */
  ifname: string;
  mac: string;
  /** The address the router sends the VIP to (a permanent neighbour) and the outer GUE source. */
  address: string;
  /** The router's MAC on this link: the director's gateway_mac. */
  gatewayMac: string;
  /** EAL lcore to run on (-l); directors are spread over the CPUs. */
  lcore: number;
  /**
   * The host's management interface: the kernel's own address in the director namespace (its
   * default route goes via the router's end), where the host's health checks come from.
   */
  mgmt: DirectorMgmt;
}

/** A director host's management link, director side. */
export interface DirectorMgmt {
  /** The link's name: the router's interface (dir1-mgmt). */
  link: string;
  ifname: string;
  mac: string;
  address: string;
  gateway: string;
}

export interface ProxyNode {
  name: string;
  namespace: string;
  ifname: string;
  mac: string;
  address: string;
  gateway: string;
}

export interface GlbTopology {
  name: typeof GLB_TOPOLOGY;
  prefix: string;
  vip: string;
  ports: { http: number; stream: number; gue: number };
  fabricMtu: number;
  clientMtu: number;
  /** The directors' outer MTU (their config's mtu). */
  directorMtu: number;
  client: ClientNode;
  router: { name: "router"; namespace: string };
  directors: DirectorNode[];
  proxies: ProxyNode[];
  links: LabLink[];
  /** Every namespace of the lab, in creation order. */
  namespaces: string[];
}

export interface GlbTopologyOptions {
  /** Namespace name prefix (default tide-glb): namespaces are <prefix>-client, <prefix>-dir1, ... */
  prefix?: string;
  /** Number of directors, 1..8 (default 2). */
  directors?: number;
  /** Number of proxies, 2..9 (default 3). */
  proxies?: number;
  /** MTU of the router<->director and router<->proxy links, 1500..9000 (default FABRIC_MTU). */
  fabricMtu?: number;
  /** MTU of the client link, 576..1460 (default CLIENT_MTU): encapsulated packets must fit 1500. */
  clientMtu?: number;
  /** CPUs to spread the directors' lcores over (default 2). */
  cpus?: number;
}

/** Locally administered MAC for side 1 (router) or 2 (peer) of link index i: 02:74:64:00:ii:0s. */
export function labMac(linkIndex: number, side: 1 | 2): string {
  const hex = (n: number) => n.toString(16).padStart(2, "0");
  return `02:74:64:00:${hex(linkIndex)}:${hex(side)}`;
}

export function buildGlbTopology(options: GlbTopologyOptions = {}): GlbTopology {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const nDirectors = options.directors ?? 2;
  const nProxies = options.proxies ?? 3;
  const fabricMtu = options.fabricMtu ?? FABRIC_MTU;
  const cpus = Math.max(1, options.cpus ?? 2);
  if (!/^[a-z][a-z0-9-]{0,30}$/.test(prefix)) {
    throw new LabError("bad_argument", `prefix ${JSON.stringify(prefix)}: lower-case letters, digits, -`);
  }
  if (!Number.isInteger(nDirectors) || nDirectors < 1 || nDirectors > 8) {
    throw new LabError("bad_argument", `directors must be 1..8, got ${nDirectors}`);
  }
  if (!Number.isInteger(nProxies) || nProxies < 2 || nProxies > 9) {
    throw new LabError("bad_argument", `proxies must be 2..9, got ${nProxies}`);
  }
  if (!Number.isInteger(fabricMtu) || fabricMtu < DIRECTOR_MTU || fabricMtu > 9000) {
    throw new LabError("bad_argument", `fabricMtu must be ${DIRECTOR_MTU}..9000, got ${fabricMtu}`);
  }
  const clientMtu = options.clientMtu ?? CLIENT_MTU;
  if (!Number.isInteger(clientMtu) || clientMtu < 576 || clientMtu > CLIENT_MTU) {
    throw new LabError(
      "bad_argument",
      `clientMtu must be 576..${CLIENT_MTU} (GUE adds ${GUE_OVERHEAD}), got ${clientMtu}`,
    );
  }
  const ns = (node: string) => `${prefix}-${node}`;
  const routerNs = ns("router");
  const links: LabLink[] = [];
  const addLink = (
    name: string,
    routerCidr: string,
    peerNs: string,
    peerCidr: string | null,
    mtu: number,
    peerIfname = "eth0",
  ) => {
    const i = links.length;
    const link: LabLink = {
      name,
      router: { namespace: routerNs, ifname: name, mac: labMac(i, 1), cidr: routerCidr },
      peer: { namespace: peerNs, ifname: peerIfname, mac: labMac(i, 2), cidr: peerCidr },
      mtu,
    };
    if (name.length > IFNAME_MAX) throw new LabError("bad_argument", `interface name too long: ${name}`);
    links.push(link);
    return link;
  };

  const client: ClientNode = {
    name: "client",
    namespace: ns("client"),
    ifname: "eth0",
    address: "10.100.1.2",
    gateway: "10.100.1.1",
  };
  addLink("client", "10.100.1.1/24", client.namespace, "10.100.1.2/24", clientMtu);

  const directorLinks: LabLink[] = [];
  for (let d = 1; d <= nDirectors; d++) {
    directorLinks.push(addLink(`dir${d}`, `10.100.${d + 1}.1/24`, ns(`dir${d}`), null, fabricMtu));
  }

  const proxies: ProxyNode[] = [];
  for (let p = 1; p <= nProxies; p++) {
    const name = `prx${p}`;
    const net = `10.100.${10 + p}`;
    const link = addLink(name, `${net}.1/24`, ns(name), `${net}.2/24`, fabricMtu);
    proxies.push({
      name,
      namespace: ns(name),
      ifname: link.peer.ifname,
      mac: link.peer.mac,
      address: `${net}.2`,
      gateway: `${net}.1`,
    });
  }

  // Management links come after every other link, so the client's, directors' and proxies' links
  // keep the indices (MACs) they had before directors had them.
  const directors: DirectorNode[] = directorLinks.map((link, i) => {
    const d = i + 1;
    const name = `dir${d}`;
    const mgmtNet = `10.100.${MGMT_SUBNET_BASE + d}`;
    const mgmt = addLink(
      `${name}-mgmt`,
      `${mgmtNet}.1/24`,
      ns(name),
      `${mgmtNet}.2/24`,
      fabricMtu,
      MGMT_IFNAME,
    );
    return {
      name,
      namespace: ns(name),
      ifname: link.peer.ifname,
      mac: link.peer.mac,
      address: `10.100.${d + 1}.2`,
      gatewayMac: link.router.mac,
      lcore: (d - 1) % cpus,
      mgmt: {
        link: mgmt.name,
        ifname: mgmt.peer.ifname,
        mac: mgmt.peer.mac,
        address: `${mgmtNet}.2`,
        gateway: `${mgmtNet}.1`,
      },
    };
  });

  return {
    name: GLB_TOPOLOGY,
    prefix,
    vip: LAB_VIP,
    ports: { http: HTTP_PORT, stream: STREAM_PORT, gue: GUE_PORT },
    fabricMtu,
    clientMtu,
    directorMtu: DIRECTOR_MTU,
    client,
    router: { name: "router", namespace: routerNs },
    directors,
    proxies,
    links,
    namespaces: [
      client.namespace,
      routerNs,
      ...directors.map((d) => d.namespace),
      ...proxies.map((p) => p.namespace),
    ],
  };
}

/** A node name (client, router, dir1, prx2) or a full namespace name -> the namespace name. */
export function namespaceOf(topology: GlbTopology, node: string): string {
  if (topology.namespaces.includes(node)) return node;
  const full = `${topology.prefix}-${node}`;
  if (topology.namespaces.includes(full)) return full;
  throw new LabError("bad_argument", `no node or namespace ${JSON.stringify(node)} in the lab`, {
    nodes: nodeNames(topology),
  });
}

export function nodeNames(topology: GlbTopology): string[] {
  return topology.namespaces.map((n) => n.slice(topology.prefix.length + 1));
}

export function directorNode(topology: Pick<GlbTopology, "directors">, name: string): DirectorNode {
  const d = topology.directors.find((x) => x.name === name);
  if (!d) {
    throw new LabError("bad_argument", `no director ${JSON.stringify(name)}`, {
      directors: topology.directors.map((x) => x.name),
    });
  }
  return d;
}

export function proxyNode(topology: GlbTopology, name: string): ProxyNode {
  const p = topology.proxies.find((x) => x.name === name);
  if (!p) {
    throw new LabError("bad_argument", `no proxy ${JSON.stringify(name)}`, {
      proxies: topology.proxies.map((x) => x.name),
    });
  }
  return p;
}

export function linkNamed(topology: GlbTopology, name: string): LabLink {
  const l = topology.links.find((x) => x.name === name);
  if (!l) {
    throw new LabError("bad_argument", `no link ${JSON.stringify(name)}`, {
      links: topology.links.map((x) => x.name),
    });
  }
  return l;
}

/** One command of a plan: an argv run without a shell. */
export interface PlannedCommand {
  argv: string[];
  /** Failure is expected on some kernels (an offload a veth does not have): keep going. */
  allowFailure?: boolean;
}

const inNs = (namespace: string, argv: string[]): string[] => ["ip", "netns", "exec", namespace, ...argv];
const sysctl = (namespace: string, key: string, value: string | number): PlannedCommand => ({
  argv: inNs(namespace, ["sysctl", "-qw", `${key}=${value}`]),
});

/**
 * The `ip route replace` argv that sends the VIP (or `destination`, a VIP prefix added with `lab vip
 * add`) to these directors: one `via`, or ECMP nexthops. An empty list removes nothing and is
 * refused: use stopDirector to make the VIP black-hole.
 */
export function vipRouteArgv(
  topology: Pick<GlbTopology, "vip" | "router" | "directors">,
  directorNames: readonly string[],
  destination = `${topology.vip}/32`,
): string[] {
  if (directorNames.length === 0) {
    throw new LabError("bad_argument", "the VIP route needs at least one director");
  }
  const hops = directorNames.map((n) => directorNode(topology, n));
  const base = ["ip", "-n", topology.router.namespace, "route", "replace", destination];
  if (hops.length === 1) return [...base, "via", hops[0]!.address, "dev", hops[0]!.name];
  return [...base, ...hops.flatMap((h) => ["nexthop", "via", h.address, "dev", h.name])];
}

/**
 * Every command that builds the topology, in order: namespaces, sysctls that must precede the
 * interfaces (IPv6 off: keeps router solicitations and MLD out of the directors' counters), veths
 * with fixed MACs, offloads, addresses, routes and neighbours. Processes are started afterwards.
 */
export function buildSetupPlan(topology: GlbTopology): PlannedCommand[] {
  const plan: PlannedCommand[] = [];
  for (const namespace of topology.namespaces) {
    plan.push({ argv: ["ip", "netns", "add", namespace] });
    plan.push(sysctl(namespace, "net.ipv6.conf.all.disable_ipv6", 1));
    plan.push(sysctl(namespace, "net.ipv6.conf.default.disable_ipv6", 1));
    plan.push(sysctl(namespace, "net.ipv4.conf.all.rp_filter", 0));
    plan.push(sysctl(namespace, "net.ipv4.conf.default.rp_filter", 0));
    plan.push({ argv: ["ip", "-n", namespace, "link", "set", "lo", "up"] });
  }
  for (const link of topology.links) {
    const { router, peer } = link;
    plan.push({
      argv: [
        "ip",
        "link",
        "add",
        router.ifname,
        "address",
        router.mac,
        "netns",
        router.namespace,
        "type",
        "veth",
        "peer",
        "name",
        peer.ifname,
        "address",
        peer.mac,
        "netns",
        peer.namespace,
      ],
    });
    for (const end of [router, peer]) {
      plan.push({ argv: ["ip", "-n", end.namespace, "link", "set", end.ifname, "mtu", String(link.mtu)] });
      plan.push({ argv: inNs(end.namespace, ["ethtool", "-K", end.ifname, ...OFFLOADS_OFF]) });
      plan.push(sysctl(end.namespace, `net.ipv4.conf.${end.ifname}.rp_filter`, 0));
      if (end.cidr)
        plan.push({ argv: ["ip", "-n", end.namespace, "addr", "add", end.cidr, "dev", end.ifname] });
      plan.push({ argv: ["ip", "-n", end.namespace, "link", "set", end.ifname, "up"] });
    }
    plan.push(sysctl(router.namespace, `net.ipv4.conf.${router.ifname}.send_redirects`, 0));
  }

  const r = topology.router.namespace;
  plan.push(sysctl(r, "net.ipv4.ip_forward", 1));
  plan.push(sysctl(r, "net.ipv4.conf.all.send_redirects", 0));
  plan.push(sysctl(r, "net.ipv4.conf.default.send_redirects", 0));
  // L4 hash: flows from one client spread over the directors by port.
  plan.push(sysctl(r, "net.ipv4.fib_multipath_hash_policy", 1));
  for (const d of topology.directors) {
    plan.push({
      argv: [
        "ip",
        "-n",
        r,
        "neigh",
        "replace",
        d.address,
        "lladdr",
        d.mac,
        "dev",
        d.name,
        "nud",
        "permanent",
      ],
    });
  }
  plan.push({
    argv: vipRouteArgv(
      topology,
      topology.directors.map((d) => d.name),
    ),
  });

  const c = topology.client;
  plan.push({ argv: ["ip", "-n", c.namespace, "route", "add", "default", "via", c.gateway] });

  // The director host's own stack: everything its kernel sends leaves by the management link.
  for (const d of topology.directors) {
    plan.push({
      argv: ["ip", "-n", d.namespace, "route", "add", "default", "via", d.mgmt.gateway, "dev", d.mgmt.ifname],
    });
  }

  for (const p of topology.proxies) {
    plan.push({ argv: ["ip", "-n", p.namespace, "route", "add", "default", "via", p.gateway] });
    plan.push({ argv: ["ip", "-n", p.namespace, "addr", "add", `${topology.vip}/32`, "dev", "lo"] });
    // Direct server return hygiene: never answer ARP for the VIP (it is on lo), never source it.
    plan.push(sysctl(p.namespace, "net.ipv4.conf.all.arp_ignore", 1));
    plan.push(sysctl(p.namespace, "net.ipv4.conf.all.arp_announce", 2));
  }
  return plan;
}
