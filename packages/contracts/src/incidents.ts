/**
 * The kernel incidents Tide knows: the one registry the finding kinds (findings.ts), the rules
 * (packages/diagnostics), the lab's reproductions (packages/lab/src/incidents) and the docs
 * (packages/diagnostics/docs/kernel-signals.md) derive from or are checked against. Numbers and
 * titles are kernel-signals.md's; `slug` names the rule and lab modules. To add one, follow
 * packages/diagnostics/docs/adding-an-incident.md.
 */
export const KERNEL_INCIDENTS = [
  {
    number: 1,
    slug: "accept-queue",
    title: "Accept queue overflow and capped backlog",
    kinds: {
      accept_queue_overflow: "completed handshakes dropped, accept queue full",
      listen_backlog_capped: "listen() backlog cut to somaxconn of the namespace",
    },
  },
  {
    number: 2,
    slug: "syn-queue",
    title: "SYN queue full / SYN cookies (and real SYN floods)",
    kinds: {
      syn_queue_overflow: "SYN queue full, cookies sent",
      syn_flood_drops: "SYN queue full and cookies off, SYNs dropped",
    },
  },
  {
    number: 3,
    slug: "pmtu-blackhole",
    title: "Path MTU blackhole",
    kinds: {
      pmtu_blackhole: "large DF packets vanish with no ICMP",
      mtu_mismatch: "an MTU step on a path or at this host (frag-needed sent)",
    },
  },
  {
    number: 4,
    slug: "port-exhaustion",
    title: "Slow connect() from ephemeral port exhaustion",
    kinds: { connect_port_exhaustion: "slow or failing connect() from a crowded ephemeral range" },
  },
  {
    number: 5,
    slug: "softirq-stall",
    title: "Softirq / NET_RX stalls",
    kinds: { softirq_net_rx_stall: "NET_RX delayed or dropping on a CPU" },
  },
  {
    number: 6,
    slug: "tcp-collapse",
    title: "tcp_collapse with large tcp_rmem",
    kinds: { tcp_collapse: "receive-buffer collapsing/pruning in softirq" },
  },
  {
    number: 7,
    slug: "listener-crowding",
    title: "Listening hash table crowding",
    kinds: { listener_crowding: "too many LISTEN sockets on one port" },
  },
] as const;

export type KernelIncident = (typeof KERNEL_INCIDENTS)[number];
export type KernelIncidentSlug = KernelIncident["slug"];
type KindsOf<I> = I extends { kinds: infer K } ? keyof K & string : never;
/** A finding kind diagnostics makes from kernel counters: the union of every incident's kinds. */
export type KernelFindingKindName = KindsOf<KernelIncident>;

/** Every kernel finding kind, in registry order. */
export const KERNEL_FINDING_KINDS = KERNEL_INCIDENTS.flatMap(
  (i) => Object.keys(i.kinds) as KernelFindingKindName[],
) as [KernelFindingKindName, ...KernelFindingKindName[]];

/** The highest incident number (incidents are numbered 1..n). */
export const LAST_KERNEL_INCIDENT = Math.max(...KERNEL_INCIDENTS.map((i) => i.number));

/** The registry entry of a slug. */
export function kernelIncident(slug: KernelIncidentSlug): KernelIncident {
  const incident = KERNEL_INCIDENTS.find((i) => i.slug === slug);
  if (incident === undefined) throw new Error(`no kernel incident ${slug}`);
  return incident;
}

/** What each kernel kind means, for schema descriptions: "kind: meaning; kind: meaning". */
export function kernelKindsDescription(): string {
  return KERNEL_INCIDENTS.flatMap((i) => Object.entries(i.kinds).map(([k, d]) => `${k}: ${d}`)).join("; ");
}

/** Incident number of each kernel kind. */
export function kernelKindIncidents(): Record<KernelFindingKindName, number> {
  const out = {} as Record<KernelFindingKindName, number>;
  for (const i of KERNEL_INCIDENTS) {
    for (const kind of Object.keys(i.kinds) as KernelFindingKindName[]) out[kind] = i.number;
  }
  return out;
}
