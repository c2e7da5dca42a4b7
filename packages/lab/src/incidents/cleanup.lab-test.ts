/**
 * Crash cleanup (root): a stale tide-inc-* namespace with a process still running in it (what a
 * killed test run leaves) is removed, process first; namespaces of other live runs are kept.
 */
import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { listNamespaces, namespacePids, runCommand } from "../host-command";
import { cleanupStaleNamespaces } from "./namespace";

describe("stale incident namespaces", () => {
  it("are removed with their processes", async () => {
    const name = "tide-inc-stale-test";
    await runCommand(["ip", "netns", "add", name]);
    const child = spawn("ip", ["netns", "exec", name, "sleep", "60"], { stdio: "ignore", detached: true });
    child.unref();
    for (let i = 0; i < 50 && (await namespacePids(name)).length === 0; i++) await sleep(20);
    expect((await namespacePids(name)).length).toBe(1);
    const removed = await cleanupStaleNamespaces();
    expect(removed).toContain(name);
    expect(removed.every((n) => n.startsWith("tide-inc-"))).toBe(true);
    expect(await listNamespaces()).not.toContain(name);
    for (let i = 0; i < 50 && child.exitCode === null && child.signalCode === null; i++) await sleep(20);
    expect(child.signalCode ?? child.exitCode).not.toBeNull();
  });

  it("leave the namespaces of other live runs alone", async () => {
    const other = "tide-inc-1-other-run"; // pid 1 is alive: another run owns this one
    await runCommand(["ip", "netns", "add", other]);
    try {
      const removed = await cleanupStaleNamespaces();
      expect(removed).not.toContain(other);
      expect(await listNamespaces()).toContain(other);
    } finally {
      await runCommand(["ip", "netns", "del", other], { allowFailure: true });
    }
  });
});
