import { describe, expect, it } from "vitest";
import { directorLaunch, labPaths, LabStateFile, redirectArgv, testServerArgv } from "./lab-files";
import { buildGlbTopology } from "./topology";

const t = buildGlbTopology();
const paths = labPaths("/tmp/lab-root", "glb");

describe("directorLaunch", () => {
  const d = t.directors[1]!;
  const launch = directorLaunch(t, d, {
    directorBin: "/x/tide-director",
    directorLauncher: "/x/test-director",
    paths,
    idleSleepUs: 100,
    runId: "r1",
    tableFile: "/tmp/lab-root/glb/forwarding.bin",
  });

  it("configures the director for its link", () => {
    expect(launch.config).toEqual({
      control_socket: "/tmp/lab-root/glb/dir2.sock",
      pool_names: ["web"],
      hash_fields: ["src_addr", "src_port"],
      gateway_mac: d.gatewayMac,
      source_ip: "10.100.3.2",
      mtu: 1500,
      idle_sleep_us: 100,
      table_file: "/tmp/lab-root/glb/forwarding.bin",
    });
  });

  it("runs it in its namespace on af_packet through the test launcher (no hugepages)", () => {
    expect(launch.argv).toEqual([
      "ip",
      "netns",
      "exec",
      "tide-glb-dir2",
      "/x/test-director",
      "/x/tide-director",
      "--file-prefix=tide-glb-dir2-r1",
      "-l",
      "1",
      "--vdev=net_af_packet0,iface=eth0",
      "--",
      "--config",
      "/tmp/lab-root/glb/dir2.json",
    ]);
    expect(launch.filePrefix).toBe("tide-glb-dir2-r1");
  });
});

describe("process commands", () => {
  it("starts tide-redirect on the proxy's veth with its address as local", () => {
    expect(redirectArgv(t, t.proxies[0]!, "/x/tide-redirect", paths)).toEqual([
      "/x/tide-redirect",
      "--iface",
      "eth0",
      "--netns",
      "tide-glb-prx1",
      "--local",
      "10.100.11.2",
      "--port",
      "19523",
      "--socket",
      "/tmp/lab-root/glb/prx1.redirect.sock",
    ]);
  });

  it("starts the test server with plain node in the proxy namespace", () => {
    const argv = testServerArgv(t, t.proxies[2]!, {
      nodeBin: "/usr/bin/node",
      script: "/s.mjs",
      backlog: 64,
    });
    expect(argv.slice(0, 6)).toEqual(["ip", "netns", "exec", "tide-glb-prx3", "/usr/bin/node", "/s.mjs"]);
    expect(argv).toContain("prx3");
    expect(argv.slice(-2)).toEqual(["--backlog", "64"]);
  });

  it("refuses socket paths longer than sun_path", () => {
    expect(() => labPaths(`/tmp/${"x".repeat(120)}`, "glb").directorSocket("dir1")).toThrow(/too long/);
  });
});

describe("LabStateFile", () => {
  it("accepts what up writes and refuses unknown keys", () => {
    const state = {
      version: 1,
      topology: "glb",
      prefix: "tide-glb",
      options: {},
      createdAt: "2025-01-01T00:00:00.000Z",
      ownerPid: 1,
      ready: true,
      namespaces: t.namespaces,
      processes: [
        { key: "dir1", kind: "director", node: "dir1", pid: 10, startTime: 5, argv: ["x"], log: "/l" },
      ],
      dpdkPrefixes: ["tide-glb-dir1-r1"],
      ecmp: ["dir1", "dir2"],
      redirect: false,
      table: { hash: "ab", states: { prx1: "draining" }, health: { prx1: true } },
    };
    expect(LabStateFile.parse(state)).toEqual(state);
    expect(LabStateFile.safeParse({ ...state, extra: 1 }).success).toBe(false);
  });
});
