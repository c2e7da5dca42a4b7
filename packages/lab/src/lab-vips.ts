/**
 * VIPs added to a running lab beside its own (pure: parsing, checks and the `ip` commands; the
 * effects are Lab.addVip/removeVip). A VIP needs, as the lab's own gets at setup (topology.ts):
 *
 *   1. the router's route for it towards the directors (ECMP over the directors in the route now);
 *   2. the address on every proxy's loopback (direct server return: the proxies answer for it; a
 *      prefix on lo makes the kernel answer for every address in it; arp_ignore/arp_announce are
 *      set for the whole namespace at setup);
 *   3. a bind in the directors' table: a director drops a packet no bind matches (counter
 *      `no_bind`). A standalone lab adds the VIP's binds to its own table (the lab's ports: HTTP,
 *      stream TCP and UDP) and pushes it; in console mode the pool's bind is made in the console.
 */
import { AddressError, formatAddress, parseCidr } from "@tide/forwarding";
import { LabError } from "./errors";
import { vipRouteArgv, type GlbTopology, type PlannedCommand } from "./topology";

/** Shortest prefix `vip add` takes: a /16 on every proxy's lo is already more than a lab needs. */
export const VIP_MIN_PREFIX_BITS = 16;
/** The lab's own links and management networks (10.100.<n>.0/24): never a VIP. */
const LAB_FABRIC = { address: "10.100.0.0", prefixBits: 16 };

export interface LabVip {
  /** Network address and prefix, canonical: 10.200.0.20/32, 10.200.1.0/28. */
  cidr: string;
  address: string;
  prefixBits: number;
}

/** A recorded added VIP: its prefix and the pool it is for (the console's pool name, or the lab's). */
export interface LabVipRecord {
  cidr: string;
  pool: string;
}

const toInt = (bytes: Uint8Array) =>
  ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
const mask = (bits: number) => (bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0);
const fromInt = (n: number) =>
  formatAddress(Uint8Array.of(n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255));

/**
 * "10.200.0.20", "10.200.0.20/32" or "10.200.1.0/28" -> the VIP. IPv4 only (the lab's namespaces
 * run without IPv6), a prefix of VIP_MIN_PREFIX_BITS..32 with no host bits set, and a unicast
 * address outside the loopback, link-local and multicast ranges.
 */
export function parseVip(text: string): LabVip {
  let parsed: ReturnType<typeof parseCidr>;
  try {
    parsed = parseCidr(text.trim());
  } catch (e) {
    const why = e instanceof AddressError ? e.message : String(e);
    throw new LabError(
      "bad_argument",
      `bad VIP ${JSON.stringify(text)}: ${why} (e.g. 10.200.0.20 or 10.200.1.0/28)`,
    );
  }
  const { address, prefixBits } = parsed;
  if (address.family !== "ipv4") {
    throw new LabError("bad_argument", `bad VIP ${text}: IPv4 only (the lab's namespaces have no IPv6)`);
  }
  if (prefixBits < VIP_MIN_PREFIX_BITS) {
    throw new LabError(
      "bad_argument",
      `bad VIP ${text}: prefix /${prefixBits} is shorter than /${VIP_MIN_PREFIX_BITS}`,
    );
  }
  const n = toInt(address.bytes);
  const network = (n & mask(prefixBits)) >>> 0;
  if (network !== n) {
    throw new LabError(
      "bad_argument",
      `bad VIP ${text}: host bits set (did you mean ${fromInt(network)}/${prefixBits}?)`,
    );
  }
  const first = address.bytes[0]!;
  if (n === 0 || first === 127 || first >= 224 || (first === 169 && address.bytes[1] === 254)) {
    throw new LabError(
      "bad_argument",
      `bad VIP ${text}: not a unicast address (0.0.0.0, 127/8, 169.254/16, multicast and above are refused)`,
    );
  }
  const dotted = formatAddress(address.bytes);
  return { cidr: `${dotted}/${prefixBits}`, address: dotted, prefixBits };
}

function overlaps(a: { address: string; prefixBits: number }, b: { address: string; prefixBits: number }) {
  const bits = Math.min(a.prefixBits, b.prefixBits);
  const ai = toInt(parseCidr(a.address).address.bytes);
  const bi = toInt(parseCidr(b.address).address.bytes);
  return ((ai ^ bi) & mask(bits)) >>> 0 === 0;
}

/**
 * Whether `vip` may be added to a lab that has `existing` added VIPs: "exists" when the very same
 * prefix is there (adding again is a no-op); throws when it overlaps the lab's links, its own VIP
 * or another added VIP (two routes and two lo addresses for one address: which pool would it be?).
 */
export function checkNewVip(
  topology: Pick<GlbTopology, "vip">,
  existing: readonly LabVipRecord[],
  vip: LabVip,
): "new" | "exists" {
  if (overlaps(vip, LAB_FABRIC)) {
    throw new LabError("bad_argument", `VIP ${vip.cidr} overlaps the lab's own links (10.100.0.0/16)`);
  }
  if (overlaps(vip, { address: topology.vip, prefixBits: 32 })) {
    throw new LabError(
      "bad_argument",
      `VIP ${vip.cidr} ${vip.prefixBits === 32 ? "is" : "contains"} the lab's own VIP ${topology.vip}, which is always routed`,
    );
  }
  for (const e of existing) {
    if (e.cidr === vip.cidr) return "exists";
    const other = parseVip(e.cidr);
    if (overlaps(vip, other)) {
      throw new LabError(
        "bad_argument",
        `VIP ${vip.cidr} overlaps ${e.cidr}, added before: remove it first`,
        {
          vips: existing.map((x) => x.cidr),
        },
      );
    }
  }
  return "new";
}

/**
 * The commands that route a VIP in the lab (idempotent: `replace` everywhere): the router's route
 * towards these directors, and the prefix on every proxy's lo.
 */
export function vipAddPlan(topology: GlbTopology, vip: LabVip, ecmp: readonly string[]): PlannedCommand[] {
  return [
    { argv: vipRouteArgv(topology, ecmp, vip.cidr) },
    ...topology.proxies.map((p) => ({
      argv: ["ip", "-n", p.namespace, "addr", "replace", vip.cidr, "dev", "lo"],
    })),
  ];
}

/** What vipAddPlan undoes; each may fail when already gone (a half-removed VIP is removed again). */
export function vipRemovePlan(topology: GlbTopology, vip: LabVip): PlannedCommand[] {
  return [
    { argv: ["ip", "-n", topology.router.namespace, "route", "del", vip.cidr], allowFailure: true },
    ...topology.proxies.map((p) => ({
      argv: ["ip", "-n", p.namespace, "addr", "del", vip.cidr, "dev", "lo"],
      allowFailure: true,
    })),
  ];
}
