import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { BccToolName } from "@tide/contracts";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "@tide/devstack";
import { BccTools } from "./bcc-tools";

/**
 * The runner against stand-in tools: shell scripts that print recorded bcc output (the tools
 * themselves cannot compile on a host without kernel headers, see availability.ts).
 */
const fixture = (name: string) => path.join(import.meta.dirname, "__fixtures__", name);
let dirs: string[] = [];
let tools: BccTools[] = [];
afterEach(() => {
  for (const t of tools) t.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  tools = [];
  dirs = [];
});

function script(body: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "tide-bcc-run-"));
  dirs.push(dir);
  const file = path.join(dir, "tool");
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

const until = <T>(probe: () => T | undefined, timeoutMs = 5000) =>
  waitFor("the tools' output", probe, { timeoutMs, intervalMs: 20 }) as Promise<T>;

describe("BccTools", () => {
  it("folds streamed output into absolute histograms and reports both tools on", async () => {
    const binaries: Record<BccToolName, string> = {
      tcpconnlat: script(`cat ${fixture("tcpconnlat.txt")}; exec sleep 30`),
      // Two interval prints: the histograms add up.
      softirqs: script(
        `cat ${fixture("softirqs-dist.txt")}; echo; cat ${fixture("softirqs-dist.txt")}; echo; exec sleep 30`,
      ),
    };
    const t = new BccTools({
      enabled: true,
      release: "x",
      log: () => {},
      binaryFor: (tool) => binaries[tool],
    });
    tools.push(t);
    t.start();
    const r = await until(() => {
      const x = t.results();
      return x.tcpConnectLatency.length === 6 &&
        x.softirqTime.find((s) => s.softirq === "timer")?.durationUs[0] === 18
        ? x
        : undefined;
    });
    expect(r.tools.map((x) => [x.tool, x.state])).toEqual([
      ["tcpconnlat", "on"],
      ["softirqs", "on"],
    ]);
    // wget made 2 connections (1.65 and 1.60 ms: bucket 10), busiest first.
    expect(r.tcpConnectLatency[0]).toEqual({
      pid: 1201,
      comm: "wget",
      latencyUs: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
    });
    const netRx = r.softirqTime.find((s) => s.softirq === "net_rx")!.durationUs;
    expect(netRx.slice(0, 4)).toEqual([6, 80, 3400, 440]);
  });

  it("reports a tool that exits as off with its last error and retries", async () => {
    const counter = path.join(mkdtempSync(path.join(tmpdir(), "tide-bcc-n-")), "runs");
    dirs.push(path.dirname(counter));
    const failing = script(
      `echo run >> ${counter}; echo "chdir(/lib/modules/x/build): No such file or directory" >&2; exit 1`,
    );
    const logs: string[] = [];
    const t = new BccTools({
      enabled: true,
      release: "x",
      log: (l) => logs.push(l),
      retryMs: 50,
      binaryFor: (tool) => (tool === "softirqs" ? failing : null),
    });
    tools.push(t);
    t.start();
    await until(() => {
      try {
        return readFileSync(counter, "utf8").split("\n").filter(Boolean).length >= 2 ? true : undefined;
      } catch {
        return undefined;
      }
    });
    const soft = await until(() => t.results().tools.find((x) => x.tool === "softirqs" && x.state === "off"));
    expect(soft.reason).toBe("exited");
    expect(soft.detail).toContain("No such file or directory");
    expect(logs.some((l) => l.includes("retrying"))).toBe(true);
  });

  it("stays off when disabled", () => {
    const t = new BccTools({ enabled: false, release: "x", log: () => {} });
    tools.push(t);
    t.start();
    expect(t.results().tools.every((x) => x.state === "off" && x.reason === "disabled")).toBe(true);
  });
});
