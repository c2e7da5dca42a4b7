import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AgentConfig } from "@tide/agent";
import { resolveConsoleTarget } from "../env";
import { buildGlbTopology } from "../topology";
import {
  bindsMatch,
  bindsWithLab,
  hashFieldsMatch,
  labHosts,
  labPoolBinds,
  labPoolRequest,
  nextActionTowardsActive,
} from "./fleet.plan";
import { labAgentConfig, labAgentFiles } from "./lab-agents";

const topology = buildGlbTopology();

describe("the lab's fleet as a console sees it", () => {
  it("names one host per director and proxy, with the proxy addresses", () => {
    expect(labHosts(topology).map((h) => [h.name, h.hostname, h.role, h.namespace, h.address])).toEqual([
      ["dir1", "lab-director-1", "director", "tide-glb-dir1", null],
      ["dir2", "lab-director-2", "director", "tide-glb-dir2", null],
      ["prx1", "lab-proxy-1", "proxy", "tide-glb-prx1", "10.100.11.2"],
      ["prx2", "lab-proxy-2", "proxy", "tide-glb-prx2", "10.100.12.2"],
      ["prx3", "lab-proxy-3", "proxy", "tide-glb-prx3", "10.100.13.2"],
    ]);
  });

  it("registers the pool 'lab' with the VIP binds and hash fields the lab uses", () => {
    const req = labPoolRequest(topology);
    expect(req.name).toBe("lab");
    expect(req.hashFields).toEqual(["src_addr", "src_port"]);
    expect(req.binds).toEqual([
      { address: "10.200.0.10", proto: "tcp", portStart: 80, portEnd: 80 },
      { address: "10.200.0.10", proto: "tcp", portStart: 9000, portEnd: 9000 },
      { address: "10.200.0.10", proto: "udp", portStart: 9000, portEnd: 9000 },
    ]);
  });

  it("compares binds regardless of order and of a /32 suffix, and hash fields in order", () => {
    const wanted = labPoolBinds(topology);
    const console = wanted
      .map((b, i) => ({ id: `b${i}`, prefixBits: 32, ...b, portEnd: b.portEnd ?? b.portStart }))
      .reverse();
    expect(bindsMatch(console, wanted)).toBe(true);
    expect(bindsMatch([{ ...console[0]!, address: "10.200.0.10/32" }, ...console.slice(1)], wanted)).toBe(
      true,
    );
    expect(bindsMatch(console.slice(1), wanted)).toBe(false);
    expect(bindsMatch([{ ...console[0]!, portEnd: 81 }, ...console.slice(1)], wanted)).toBe(false);
    expect(hashFieldsMatch(["src_addr", "src_port"], ["src_addr", "src_port"])).toBe(true);
    expect(hashFieldsMatch(["src_port", "src_addr"], ["src_addr", "src_port"])).toBe(false);
  });

  it("adds the lab's missing binds and keeps an operator's (a VIP added with lab vip add)", () => {
    const wanted = labPoolBinds(topology);
    const console = wanted.map((b, i) => ({
      id: `b${i}`,
      prefixBits: 32,
      ...b,
      portEnd: b.portEnd ?? b.portStart,
    }));
    expect(bindsWithLab(console, wanted)).toBeNull();
    const operator = {
      id: "bx",
      address: "10.200.1.0",
      prefixBits: 28,
      proto: "tcp" as const,
      portStart: 9000,
      portEnd: 9000,
    };
    expect(bindsWithLab([...console, operator], wanted)).toBeNull();
    expect(bindsWithLab([console[1]!, operator], wanted)).toEqual([
      { address: "10.200.0.10", proto: "tcp", portStart: 9000, portEnd: 9000 },
      { address: "10.200.1.0/28", proto: "tcp", portStart: 9000, portEnd: 9000 },
      { address: "10.200.0.10", proto: "tcp", portStart: 80, portEnd: 80 },
      { address: "10.200.0.10", proto: "udp", portStart: 9000, portEnd: 9000 },
    ]);
  });

  it("brings a new proxy to active through the state machine", () => {
    expect(nextActionTowardsActive("inactive")).toBe("fill");
    expect(nextActionTowardsActive("filling")).toBe("activate");
    expect(nextActionTowardsActive("draining")).toBe("activate");
    expect(nextActionTowardsActive("active")).toBeNull();
  });
});

describe("the lab's agents", () => {
  it("configures a director's and a proxy's agent as the agent's own schema accepts", () => {
    const [dir1, , prx1] = labHosts(topology);
    const files = labAgentFiles("/x/lab/glb", dir1!.hostname);
    const director = labAgentConfig({
      host: dir1!,
      consoleUrl: "http://localhost:3000",
      files,
      socket: "/x/lab/glb/dir1.sock",
      probesBinary: null,
      nsdiagBinary: "/r/dataplane/build/tide-nsdiag",
      healthcheckBinary: "/r/dataplane/build/tide-healthcheck",
    });
    const parsed = AgentConfig.parse(director);
    expect(parsed.roles).toEqual(["director"]);
    expect(parsed.directorSocket).toBe("/x/lab/glb/dir1.sock");
    expect(parsed.redirectSocket).toBeNull();
    expect(parsed.hostname).toBe("lab-director-1");
    expect(parsed.namespaces).toEqual(["tide-glb-dir1"]);
    expect(parsed.hostTokenFile).toBe("/x/lab/glb/agents/lab-director-1/host-token");
    expect(parsed.tableDir).toBe("/x/lab/glb/agents/lab-director-1/tables");
    expect(parsed.spoolDir).toBe("/x/lab/glb/agents/lab-director-1/spool");
    expect(parsed.metricsListen).toBe("");
    // Health checks run from the director host's own stack (its management link).
    expect(parsed.healthNetns).toBe("tide-glb-dir1");
    expect(parsed.healthcheckBinary).toBe("/r/dataplane/build/tide-healthcheck");

    const proxy = AgentConfig.parse(
      labAgentConfig({
        host: prx1!,
        consoleUrl: "http://localhost:3000",
        files: labAgentFiles("/x/lab/glb", prx1!.hostname),
        socket: "/x/lab/glb/prx1.redirect.sock",
        probesBinary: null,
        nsdiagBinary: null,
        healthcheckBinary: "/r/dataplane/build/tide-healthcheck",
      }),
    );
    expect(proxy.roles).toEqual(["proxy"]);
    expect(proxy.redirectSocket).toBe("/x/lab/glb/prx1.redirect.sock");
    expect(proxy.directorSocket).toBeNull();
    expect(proxy.namespaces).toEqual(["tide-glb-prx1"]);
    // A proxy host checks nobody.
    expect(proxy.healthNetns).toBeNull();
    expect(proxy.healthcheckBinary).toBeNull();
  });
});

describe("console mode from flags and environment", () => {
  const none = { consoleUrl: null, apiToken: null };

  it("is standalone when nothing names a console", () => {
    expect(resolveConsoleTarget({}, none)).toBeNull();
  });

  it("takes the token from --token-file over the environment, trimmed, and the URL without a trailing /", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "tide-lab-env-"));
    try {
      const file = path.join(dir, "token");
      writeFileSync(file, "tide_fromfile\n");
      expect(
        resolveConsoleTarget(
          { console: "http://localhost:3000/", tokenFile: file },
          { consoleUrl: "http://other:1", apiToken: "tide_fromenv" },
        ),
      ).toEqual({ url: "http://localhost:3000", token: "tide_fromfile", tokenFile: file });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(resolveConsoleTarget({}, { consoleUrl: "http://c:3000", apiToken: "tide_env" })).toEqual({
      url: "http://c:3000",
      token: "tide_env",
      tokenFile: null,
    });
  });

  it("refuses a missing token, a host token, a token file without a console, and a non-http URL", () => {
    expect(() => resolveConsoleTarget({ console: "http://c:3000" }, none)).toThrow(
      /needs an admin API token/,
    );
    expect(() =>
      resolveConsoleTarget({ console: "http://c:3000" }, { ...none, apiToken: "tide_host_x" }),
    ).toThrow(/not a host token/);
    expect(() => resolveConsoleTarget({ tokenFile: "/nonexistent" }, none)).toThrow(/needs --console/);
    expect(() => resolveConsoleTarget({ console: "ftp://c" }, { ...none, apiToken: "tide_x" })).toThrow(
      /http\(s\) URL/,
    );
  });
});
