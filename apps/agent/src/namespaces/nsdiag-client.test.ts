import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { NSDIAG_OK as OK } from "@tide/contracts/testing";
import { afterEach, describe, expect, it } from "vitest";
import { renderMetrics } from "../metrics/exposition";
import { checkNsdiagNamespace, NsdiagClient, parseNsdiagNamespace } from "./nsdiag-client";

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

  it("reports an entry with a malformed row as that namespace's error, with what was wrong", () => {
    for (const established of [
      [["", 1, 1]],
      [["10.0.0.1", 70000, 1]],
      ["x"],
      [["x".repeat(46), 1, 1]],
      Array.from({ length: 257 }, (_, i) => ["10.0.0.1", i, 1]),
    ]) {
      const r = checkNsdiagNamespace({ ...OK, established });
      expect(r.ns).toMatchObject({ inode: OK.inode, state: "error" });
      expect(r.ns?.state === "error" && r.ns.error).toMatch(/^tide-nsdiag: malformed entry \(established/);
      expect(r.problem).toMatch(/^established/);
    }
    expect(checkNsdiagNamespace({ ...OK, listeners: [["a", 70000, 0, 0]] }).problem).toMatch(
      /^listeners\.0\.1/,
    );
    expect(checkNsdiagNamespace({ ...OK, sysctls: 3 }).problem).toMatch(/^sysctls/);
    expect(checkNsdiagNamespace(OK).problem).toBeNull();
    const full = parseNsdiagNamespace({
      ...OK,
      established: Array.from({ length: 256 }, (_, i) => ["10.0.0.1", i, 1]),
    });
    expect(full?.state === "ok" && full.established).toHaveLength(256);
  });

  it("keeps gone and error entries with their reason, and drops entries without a namespace", () => {
    expect(parseNsdiagNamespace({ inode: 5, state: "gone", error: "open /x: No such file" })).toEqual({
      inode: 5,
      state: "gone",
      error: "open /x: No such file",
    });
    expect(parseNsdiagNamespace({ inode: 5, state: "weird" })).toMatchObject({ inode: 5, state: "error" });
    expect(parseNsdiagNamespace({ inode: -1, state: "ok" })).toBeNull();
    expect(checkNsdiagNamespace("x")).toMatchObject({ ns: null, problem: expect.any(String) });
  });
});

describe("NsdiagClient", () => {
  let dir: string | null = null;
  let client: NsdiagClient | null = null;
  afterEach(() => {
    client?.stop();
    if (dir !== null) rmSync(dir, { recursive: true, force: true });
    client = dir = null;
  });

  it("skips lines and entries that are not the contract's, counts and logs them, and still answers", async () => {
    // A stand-in tide-nsdiag: its hello, then per request junk and a reply with two bad entries.
    dir = mkdtempSync(path.join(tmpdir(), "tide-nsdiag-"));
    const binary = path.join(dir, "tide-nsdiag");
    const reply = {
      id: 1,
      ns: [
        { inode: 7, state: "gone", error: "open /run/netns/x: No such file or directory" },
        { state: "ok" },
        { ...OK, inode: 8, listeners: "x" },
        OK,
      ],
    };
    writeFileSync(
      binary,
      [
        "#!/bin/sh",
        `echo '{"type":"hello","version":"0.1.0","netns":4026531840}'`,
        "while read -r line; do",
        "  echo 'not json'",
        `  echo '{"id":"1","ns":[]}'`,
        `  printf '%s\\n' '${JSON.stringify(reply)}'`, // not echo: dash's expands the \n in OK's texts
        "done",
      ].join("\n"),
    );
    chmodSync(binary, 0o755);
    const logged: string[] = [];
    client = new NsdiagClient(binary, (line) => logged.push(line));
    const ns = await client.request([{ inode: 7, path: "/run/netns/x" }], true);
    expect(ns.map((n) => [n.inode, n.state])).toEqual([
      [7, "gone"],
      [8, "error"],
      [OK.inode, "ok"],
    ]);
    expect(client.refused).toBe(4);
    expect(logged).toEqual([
      expect.stringMatching(/^tide-nsdiag: skipped a line that is not JSON: not json \(1 so far\)$/),
    ]);
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
