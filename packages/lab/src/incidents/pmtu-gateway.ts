/**
 * A way from the root namespace into the PMTU incident's topology (pmtu-blackhole.ts), as a real
 * host has one: tide-agent checks paths from its own namespace (tracepath and ping run where the
 * agent runs), so the agent tests (apps/agent) and the Playwright lab spec (e2e) give root this
 * route and configure the incident's server as an ordinary pmtuTarget. One helper, so two setups
 * never fight over root's routes.
 *
 *   root 10.201.29.1 ─9000─ gw 10.201.29.2 | gw 10.201.30.1 ─MTU─ ra 10.201.30.2 ─ rb ─ server 10.201.33.x
 *
 * The gateway namespace lives as long as the agent: root's routes to 10.201.30.0/24 and
 * 10.201.32.0/22 always point into it, so a probe never leaves the machine, even while no incident
 * topology is attached (gw then answers "net unreachable"). Its name carries this process's incident
 * prefix: a crashed run's gateway is removed by the next run's cleanupStaleNamespaces(), and with it
 * the root end of the veth and root's routes.
 */
import { runCommand, runInNamespace } from "../host-command";
import { createNamespace, deleteNamespace, INCIDENT_PREFIX, setSysctl } from "./namespace";
import type { PmtuHandle } from "./pmtu-blackhole";

export const PMTU_GATEWAY_NS = `${INCIDENT_PREFIX}pmtu-gw`;
const ROOT_ADDR = "10.201.29.1";
const GW_ROOT_ADDR = "10.201.29.2";
const GW_RA_ADDR = "10.201.30.1";
const RA_GW_ADDR = "10.201.30.2";
/** Root's routes into the lab: the gw-ra link and the incident's rb and server subnets. */
const ROOT_ROUTES = ["10.201.30.0/24", "10.201.32.0/22"];
const ROOT_LINK_MTU = 9000;

export interface PmtuGateway {
  /** Name of the veth end in the root namespace. */
  readonly rootIf: string;
  /** Links router ra of a freshly set up incident to the gateway over a link of `mtu`. */
  attach(h: PmtuHandle, mtu: number): Promise<void>;
  /**
   * A /32 route in root for a target, re-created with a metric of its own, which also drops the
   * path MTU root learned for it earlier: the kernel keeps learned MTUs on the route's next hop,
   * and routes with identical attributes (the /22 and a plain /32 via the gateway) share one.
   */
  routeTarget(target: string): Promise<void>;
  remove(): Promise<void>;
}

function vethName(tag: string): string {
  return `te${process.pid % 100_000}${tag}`.slice(0, 15);
}

/** Fails loudly when root already routes the lab's PMTU addresses somewhere (someone else's setup). */
async function assertRootRoutesFree(): Promise<void> {
  const { stdout } = await runCommand(["ip", "-4", "route", "show"]);
  const taken = stdout.split("\n").filter((l) => /^10\.201\.(29|3[0-5])\./.test(l.trim()));
  if (taken.length > 0) throw new Error(`root already routes the PMTU lab's addresses:\n${taken.join("\n")}`);
}

export async function createPmtuGateway(): Promise<PmtuGateway> {
  await assertRootRoutesFree();
  const rootIf = vethName("r");
  const gwIf = vethName("g");
  let created = false;
  // Deleting the namespace deletes the veth pair (and root's routes through it); the explicit
  // delete covers a pair whose gateway end never left root.
  const remove = async () => {
    await deleteNamespace(PMTU_GATEWAY_NS);
    if (created) await runCommand(["ip", "link", "del", rootIf], { allowFailure: true });
  };
  try {
    await createNamespace(PMTU_GATEWAY_NS);
    await runCommand(["ip", "link", "add", rootIf, "type", "veth", "peer", "name", gwIf]);
    created = true;
    await runCommand(["ip", "link", "set", gwIf, "netns", PMTU_GATEWAY_NS]);
    await runInNamespace(PMTU_GATEWAY_NS, ["ip", "link", "set", gwIf, "name", "gw-root"]);
    for (const [ns, dev, cidr] of [
      [null, rootIf, `${ROOT_ADDR}/24`],
      [PMTU_GATEWAY_NS, "gw-root", `${GW_ROOT_ADDR}/24`],
    ] as const) {
      const run = (argv: string[]) => (ns === null ? runCommand(argv) : runInNamespace(ns, argv));
      await run(["ip", "link", "set", dev, "mtu", String(ROOT_LINK_MTU)]);
      await run(["ip", "addr", "add", cidr, "dev", dev]);
      // offloads off, as on every incident veth: GSO would hide MTU problems
      await run(["ethtool", "-K", dev, "gso", "off", "tso", "off", "gro", "off"]).catch(() => undefined);
      await run(["ip", "link", "set", dev, "up"]);
    }
    await setSysctl(PMTU_GATEWAY_NS, "net.ipv4.ip_forward", 1);
    for (const r of ROOT_ROUTES)
      await runCommand(["ip", "route", "add", r, "via", GW_ROOT_ADDR, "dev", rootIf]);
  } catch (e) {
    await remove();
    throw e;
  }
  let metric = 100;
  return {
    rootIf,
    attach: async (h, mtu) => {
      const ra = h.namespaces.routerA.name;
      const a = vethName("a");
      const b = vethName("b");
      // The previous incident's link: `ip netns del` returns before the kernel has dismantled the
      // namespace, so the gateway's end of its veth can still be there.
      await runInNamespace(PMTU_GATEWAY_NS, ["ip", "link", "del", "gw-ra"], { allowFailure: true });
      await runCommand(["ip", "link", "add", a, "type", "veth", "peer", "name", b]);
      try {
        await runCommand(["ip", "link", "set", a, "netns", PMTU_GATEWAY_NS]);
        await runCommand(["ip", "link", "set", b, "netns", ra]);
      } catch (e) {
        // still in root: deleting one end deletes the pair
        await runCommand(["ip", "link", "del", a], { allowFailure: true });
        await runCommand(["ip", "link", "del", b], { allowFailure: true });
        throw e;
      }
      for (const [ns, tmp, dev, cidr] of [
        [PMTU_GATEWAY_NS, a, "gw-ra", `${GW_RA_ADDR}/24`],
        [ra, b, "pm-gw", `${RA_GW_ADDR}/24`],
      ] as const) {
        await runInNamespace(ns, ["ip", "link", "set", tmp, "name", dev]);
        await runInNamespace(ns, ["ip", "link", "set", dev, "mtu", String(mtu)]);
        await runInNamespace(ns, ["ip", "addr", "add", cidr, "dev", dev]);
        await runInNamespace(ns, ["ethtool", "-K", dev, "gso", "off", "tso", "off", "gro", "off"]).catch(
          () => undefined,
        );
        await runInNamespace(ns, ["ip", "link", "set", dev, "up"]);
      }
      await runInNamespace(PMTU_GATEWAY_NS, ["ip", "route", "replace", "10.201.32.0/22", "via", RA_GW_ADDR]);
      // the way back to root: ra via the gateway, rb via ra (the server's default route is rb)
      await runInNamespace(ra, ["ip", "route", "add", "10.201.29.0/24", "via", GW_RA_ADDR]);
      const rb = h.namespaces.routerB.name;
      for (const net of ["10.201.29.0/24", "10.201.30.0/24"]) {
        await runInNamespace(rb, ["ip", "route", "add", net, "via", "10.201.32.1"]);
      }
    },
    routeTarget: async (target) => {
      await runCommand(["ip", "route", "del", `${target}/32`], { allowFailure: true });
      metric += 1;
      await runCommand([
        "ip",
        "route",
        "add",
        `${target}/32`,
        "via",
        GW_ROOT_ADDR,
        "dev",
        rootIf,
        "metric",
        String(metric),
      ]);
    },
    remove,
  };
}
