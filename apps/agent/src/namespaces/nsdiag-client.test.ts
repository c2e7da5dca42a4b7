import { describe, expect, it } from "vitest";
import { renderMetrics } from "../metrics/exposition";
import { parseNsdiagNamespace } from "./nsdiag-client";

// A namespace entry as dataplane/build/tide-nsdiag printed it (files trimmed).
const OK = {
  inode: 4026532319,
  state: "ok",
  listeners: [
    ["127.0.0.1", 9000, 3, 3],
    ["::", 9002, 0, 3],
    ["*", 9001, 0, 2],
  ],
  listeners_total: 3,
  established: [
    ["10.77.0.1", 9000, 50],
    ["fd77::1", 9002, 7],
    ["10.77.0.1", 41000, 1],
  ],
  established_total: 58,
  ports: [
    [9000, 1],
    [9001, 1],
    [9002, 1],
  ],
  sysctls: { "net/core/somaxconn": "3\n", "net/ipv4/tcp_rmem": "4096\t131072\t33554432\n" },
  netstat: "TcpExt: ListenOverflows\nTcpExt: 2\n",
  snmp: null,
  sockstat: "sockets: used 10\nTCP: inuse 7 orphan 0 tw 0 alloc 10 mem 38\n",
};

describe("parseNsdiagNamespace", () => {
  it("reads an ok entry", () => {
    const r = parseNsdiagNamespace(OK);
    expect(r).toMatchObject({
      inode: 4026532319,
      state: "ok",
      listeners: OK.listeners,
      ports: OK.ports,
      listenersTotal: 3,
      established: OK.established,
      establishedTotal: 58,
      snmp: null,
    });
    expect(r?.state === "ok" && r.sysctls?.get("net/core/somaxconn")).toBe("3\n");
  });

  it("reads a reply without established counts (older tide-nsdiag) as null, not zero", () => {
    const { established: _e, established_total: _t, ...old } = OK;
    expect(parseNsdiagNamespace(old)).toMatchObject({ established: null, establishedTotal: null });
  });

  it("drops malformed established entries and keeps at most 256", () => {
    const r = parseNsdiagNamespace({
      ...OK,
      established: [["", 1, 1], ["10.0.0.1", 70000, 1], "x", ["x".repeat(46), 1, 1], ["10.0.0.1", 80, 3]],
    });
    expect(r).toMatchObject({ established: [["10.0.0.1", 80, 3]] });
    const many = parseNsdiagNamespace({
      ...OK,
      established: Array.from({ length: 300 }, (_, i) => ["10.0.0.1", i, 1]),
    });
    expect(many?.state === "ok" && many.established).toHaveLength(256);
  });

  it("keeps gone and error entries with their reason, and drops junk", () => {
    expect(parseNsdiagNamespace({ inode: 5, state: "gone", error: "open /x: No such file" })).toEqual({
      inode: 5,
      state: "gone",
      error: "open /x: No such file",
    });
    expect(parseNsdiagNamespace({ inode: 5, state: "weird" })).toMatchObject({ state: "error" });
    expect(parseNsdiagNamespace({ inode: -1, state: "ok" })).toBeNull();
    expect(parseNsdiagNamespace("x")).toBeNull();
    const r = parseNsdiagNamespace({
      ...OK,
      listeners: [["", 1, 0, 0], ["a", 70000, 0, 0], "x"],
      sysctls: 3,
    });
    expect(r).toMatchObject({ listeners: [], sysctls: null });
  });
});

describe("collector metrics", () => {
  it("says which path samples namespaces, and tide-nsdiag's state", () => {
    const text = renderMetrics(null, [], {
      bufferedSamples: 0,
      consoleConnected: null,
      collector: {
        path: "nsdiag",
        reason: null,
        nsdiag: { state: "restarting", pid: null, restarts: 2, lastError: "exited (9)" },
      },
    });
    expect(text).toContain('tide_agent_namespace_collector{path="nsdiag",reason=""} 1');
    expect(text).toContain('tide_agent_nsdiag_up{state="restarting"} 0');
    expect(text).toContain("tide_agent_nsdiag_restarts_total 2");
    const shell = renderMetrics(null, [], {
      bufferedSamples: 0,
      consoleConnected: null,
      collector: { path: "shell", reason: "no nsdiagBinary configured", nsdiag: null },
    });
    expect(shell).toContain(
      'tide_agent_namespace_collector{path="shell",reason="no nsdiagBinary configured"} 1',
    );
    expect(shell).not.toContain("tide_agent_nsdiag_up");
  });
});
