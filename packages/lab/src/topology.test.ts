import { describe, expect, it } from "vitest";
import { isLabError } from "./errors";
import {
  buildGlbTopology,
  buildSetupPlan,
  CLIENT_MTU,
  labMac,
  linkNamed,
  namespaceOf,
  vipRouteArgv,
} from "./topology";

describe("buildGlbTopology", () => {
  const t = buildGlbTopology();

  it("names every namespace with the prefix", () => {
    expect(t.namespaces).toEqual([
      "tide-glb-client",
      "tide-glb-router",
      "tide-glb-dir1",
      "tide-glb-dir2",
      "tide-glb-prx1",
      "tide-glb-prx2",
      "tide-glb-prx3",
    ]);
  });

  it("gives directors and proxies the documented addresses", () => {
    expect(t.directors.map((d) => d.address)).toEqual(["10.100.2.2", "10.100.3.2"]);
    expect(t.proxies.map((p) => [p.address, p.gateway])).toEqual([
      ["10.100.11.2", "10.100.11.1"],
      ["10.100.12.2", "10.100.12.1"],
      ["10.100.13.2", "10.100.13.1"],
    ]);
    expect(t.client).toMatchObject({ address: "10.100.1.2", gateway: "10.100.1.1" });
    expect(t.directors.map((d) => [d.mgmt.ifname, d.mgmt.address, d.mgmt.gateway])).toEqual([
      ["mgmt0", "10.100.21.2", "10.100.21.1"],
      ["mgmt0", "10.100.22.2", "10.100.22.1"],
    ]);
    expect(t.vip).toBe("10.200.0.10");
  });

  it("points each director's gateway MAC at the router's end of its link", () => {
    for (const d of t.directors) {
      const link = t.links.find((l) => l.name === d.name)!;
      expect(d.gatewayMac).toBe(link.router.mac);
      expect(d.mac).toBe(link.peer.mac);
      expect(link.peer.cidr).toBeNull();
    }
  });

  it("uses unique, locally administered MACs", () => {
    const macs = t.links.flatMap((l) => [l.router.mac, l.peer.mac]);
    expect(new Set(macs).size).toBe(macs.length);
    expect(labMac(3, 2)).toBe("02:74:64:00:03:02");
  });

  it("keeps the MACs of the client, director and proxy links: management links come last", () => {
    expect(t.links.map((l) => l.name)).toEqual([
      "client",
      "dir1",
      "dir2",
      "prx1",
      "prx2",
      "prx3",
      "dir1-mgmt",
      "dir2-mgmt",
    ]);
    expect(t.directors.map((d) => [d.mac, d.gatewayMac])).toEqual([
      ["02:74:64:00:01:02", "02:74:64:00:01:01"],
      ["02:74:64:00:02:02", "02:74:64:00:02:01"],
    ]);
    expect(t.proxies.map((p) => p.mac)).toEqual([
      "02:74:64:00:03:02",
      "02:74:64:00:04:02",
      "02:74:64:00:05:02",
    ]);
  });

  it("gives each director host a management link in its namespace, on subnets nothing else uses", () => {
    for (const d of t.directors) {
      const link = linkNamed(t, d.mgmt.link);
      expect(link.peer).toEqual({
        namespace: d.namespace,
        ifname: "mgmt0",
        mac: d.mgmt.mac,
        cidr: `${d.mgmt.address}/24`,
      });
      expect(link.router.cidr).toBe(`${d.mgmt.gateway}/24`);
      expect(link.mtu).toBe(t.fabricMtu);
      expect(d.mgmt.ifname).not.toBe(d.ifname);
    }
    // Largest lab: 8 directors and 9 proxies, every /24 distinct.
    const big = buildGlbTopology({ directors: 8, proxies: 9 });
    const nets = big.links.map((l) => l.router.cidr!.split(".").slice(0, 3).join("."));
    expect(new Set(nets).size).toBe(nets.length);
    expect(big.directors.at(-1)!.mgmt.address).toBe("10.100.28.2");
    expect(big.links.every((l) => l.name.length <= 15)).toBe(true);
  });

  it("spreads directors over the CPUs", () => {
    expect(t.directors.map((d) => d.lcore)).toEqual([0, 1]);
    expect(buildGlbTopology({ cpus: 1 }).directors.map((d) => d.lcore)).toEqual([0, 0]);
  });

  it("leaves room for GUE on the client link", () => {
    expect(t.links.find((l) => l.name === "client")!.mtu).toBe(CLIENT_MTU);
    expect(CLIENT_MTU + 40).toBe(t.directorMtu);
  });

  it("refuses bad options", () => {
    for (const o of [{ prefix: "Bad Prefix" }, { directors: 0 }, { proxies: 1 }, { clientMtu: 1500 }]) {
      expect(() => buildGlbTopology(o)).toThrow();
      try {
        buildGlbTopology(o);
      } catch (e) {
        expect(isLabError(e, "bad_argument")).toBe(true);
      }
    }
  });

  it("resolves node names to namespaces", () => {
    expect(namespaceOf(t, "prx2")).toBe("tide-glb-prx2");
    expect(namespaceOf(t, "tide-glb-router")).toBe("tide-glb-router");
    expect(() => namespaceOf(t, "prx9")).toThrow(/no node/);
  });
});

describe("vipRouteArgv", () => {
  const t = buildGlbTopology();
  it("uses ECMP nexthops for several directors and a plain via for one", () => {
    expect(vipRouteArgv(t, ["dir1", "dir2"])).toEqual([
      "ip",
      "-n",
      "tide-glb-router",
      "route",
      "replace",
      "10.200.0.10/32",
      "nexthop",
      "via",
      "10.100.2.2",
      "dev",
      "dir1",
      "nexthop",
      "via",
      "10.100.3.2",
      "dev",
      "dir2",
    ]);
    expect(vipRouteArgv(t, ["dir2"]).slice(-4)).toEqual(["via", "10.100.3.2", "dev", "dir2"]);
    expect(() => vipRouteArgv(t, [])).toThrow(/at least one/);
  });
});

describe("buildSetupPlan", () => {
  const t = buildGlbTopology();
  const plan = buildSetupPlan(t).map((c) => c.argv.join(" "));

  it("creates every namespace before any link", () => {
    const lastNs = Math.max(...t.namespaces.map((n) => plan.indexOf(`ip netns add ${n}`)));
    const firstLink = plan.findIndex((c) => c.startsWith("ip link add"));
    expect(lastNs).toBeGreaterThanOrEqual(0);
    expect(firstLink).toBeGreaterThan(lastNs);
  });

  it("switches offloads off on both ends of every link", () => {
    for (const l of t.links) {
      for (const end of [l.router, l.peer]) {
        expect(plan).toContain(
          `ip netns exec ${end.namespace} ethtool -K ${end.ifname} tx off rx off gso off tso off gro off`,
        );
      }
    }
  });

  it("configures the router for L4 ECMP with static director neighbours", () => {
    expect(plan).toContain("ip netns exec tide-glb-router sysctl -qw net.ipv4.fib_multipath_hash_policy=1");
    expect(plan).toContain("ip netns exec tide-glb-router sysctl -qw net.ipv4.ip_forward=1");
    expect(plan).toContain("ip netns exec tide-glb-router sysctl -qw net.ipv4.conf.all.send_redirects=0");
    expect(plan).toContain(
      `ip -n tide-glb-router neigh replace 10.100.2.2 lladdr ${t.directors[0]!.mac} dev dir1 nud permanent`,
    );
    expect(plan).toContain(vipRouteArgv(t, ["dir1", "dir2"]).join(" "));
  });

  it("puts the VIP on every proxy's lo and routes it via the router", () => {
    for (const p of t.proxies) {
      expect(plan).toContain(`ip -n ${p.namespace} addr add 10.200.0.10/32 dev lo`);
      expect(plan).toContain(`ip -n ${p.namespace} route add default via ${p.gateway}`);
      expect(plan).toContain(`ip netns exec ${p.namespace} sysctl -qw net.ipv4.conf.all.rp_filter=0`);
    }
  });

  it("never gives a director's af_packet port an address; only its management link has one", () => {
    for (const d of t.directors) {
      expect(plan.filter((c) => c.startsWith(`ip -n ${d.namespace} addr add`))).toEqual([
        `ip -n ${d.namespace} addr add ${d.mgmt.address}/24 dev mgmt0`,
      ]);
    }
  });

  it("routes a director host's own traffic by its management link, and the VIP still to eth0", () => {
    for (const d of t.directors) {
      expect(plan).toContain(`ip -n ${d.namespace} route add default via ${d.mgmt.gateway} dev mgmt0`);
      expect(plan).toContain(`ip netns exec ${d.namespace} sysctl -qw net.ipv4.conf.mgmt0.rp_filter=0`);
      expect(plan).toContain(
        `ip netns exec ${d.namespace} ethtool -K mgmt0 tx off rx off gso off tso off gro off`,
      );
      expect(plan.filter((c) => c.startsWith(`ip -n ${d.namespace} route`))).toHaveLength(1);
    }
    // The VIP route and the permanent neighbours name only the af_packet links.
    expect(plan.filter((c) => c.includes(" neigh "))).toEqual(
      t.directors.map(
        (d) => `ip -n tide-glb-router neigh replace ${d.address} lladdr ${d.mac} dev ${d.name} nud permanent`,
      ),
    );
    expect(plan.filter((c) => c.includes("10.200.0.10/32") && c.includes("route"))).toEqual([
      vipRouteArgv(t, ["dir1", "dir2"]).join(" "),
    ]);
  });
});
