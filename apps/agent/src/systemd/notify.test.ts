import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SystemdNotify } from "./notify";

/**
 * SystemdNotify with a fake systemd-notify: a shell script that appends one line per call, the
 * socket it was given and then each argument, tab-separated, after sleeping DELAY seconds.
 */
let dir: string;
let out: string;
let fake: string;

function fakeNotify(delaySeconds = "0", exitCode = 0): string {
  writeFileSync(
    fake,
    `#!/bin/sh
sleep ${delaySeconds}
line="$NOTIFY_SOCKET"
for a in "$@"; do line="$line	$a"; done
printf '%s\\n' "$line" >> '${out}'
${exitCode !== 0 ? `echo "Failed to notify init system: No such file or directory" >&2; exit ${exitCode}` : ""}
`,
  );
  chmodSync(fake, 0o755);
  return fake;
}

/** What the fake was called with, one array per call: [socket, ...args]. */
const calls = (): string[][] =>
  existsSync(out)
    ? readFileSync(out, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => l.split("\t"))
    : [];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "tide-notify-"));
  out = path.join(dir, "calls.txt");
  fake = path.join(dir, "systemd-notify");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("SystemdNotify", () => {
  it("sends nothing when NOTIFY_SOCKET is not set (not under a Type=notify unit)", async () => {
    const logs: string[] = [];
    const n = new SystemdNotify({ socket: undefined, command: fakeNotify(), log: (l) => logs.push(l) });
    expect(n.enabled).toBe(false);
    await n.ready("reporting");
    await n.stopping("stopping");
    expect(calls()).toEqual([]);
    expect(logs).toEqual([]);
  });

  it("sends READY, STATUS, RELOADING and STOPPING in order, with the socket, one line each", async () => {
    const logs: string[] = [];
    const n = new SystemdNotify({
      socket: "/run/systemd/notify",
      command: fakeNotify(),
      log: (l) => logs.push(l),
    });
    void n.ready("reporting to https://tide.example.net as lb-01");
    void n.reloading("reloading the configuration");
    void n.ready("reporting to https://tide.example.net as lb-01");
    void n.status("console https://tide.example.net unreachable,\nbuffering 12 samples");
    await n.stopping("stopping: writing the spool");
    const c = calls();
    expect(c[0]).toEqual([
      "/run/systemd/notify",
      "READY=1",
      "STATUS=reporting to https://tide.example.net as lb-01",
    ]);
    expect(c[1]?.slice(0, 2)).toEqual(["/run/systemd/notify", "RELOADING=1"]);
    expect(c[1]?.[2]).toMatch(/^MONOTONIC_USEC=\d+$/);
    expect(c[1]?.[3]).toBe("STATUS=reloading the configuration");
    expect(c[2]?.[1]).toBe("READY=1");
    // STATUS= is one line (systemctl status shows it as such).
    expect(c[3]).toEqual([
      "/run/systemd/notify",
      "STATUS=console https://tide.example.net unreachable, buffering 12 samples",
    ]);
    expect(c[4]).toEqual(["/run/systemd/notify", "STOPPING=1", "STATUS=stopping: writing the spool"]);
    expect(c).toHaveLength(5);
    expect(logs).toEqual([]);
  });

  it("sends only the newest of several statuses waiting behind a call, and never drops READY", async () => {
    const n = new SystemdNotify({ socket: "/run/notify", command: fakeNotify("0.2"), log: () => undefined });
    void n.status("buffering 1 sample");
    void n.status("buffering 2 samples");
    void n.ready("reporting");
    void n.status("buffering 3 samples");
    await n.status("buffering 4 samples");
    expect(calls().map((c) => c.slice(1).join(" "))).toEqual([
      "STATUS=buffering 1 sample",
      "STATUS=buffering 2 samples",
      "READY=1 STATUS=reporting",
      "STATUS=buffering 4 samples",
    ]);
  });

  it("logs a failing systemd-notify with what it said, and keeps sending", async () => {
    const logs: string[] = [];
    const n = new SystemdNotify({
      socket: "/run/notify",
      command: fakeNotify("0", 1),
      log: (l) => logs.push(l),
    });
    await n.ready("reporting");
    await n.status("still reporting");
    expect(calls()).toHaveLength(2);
    expect(logs[0]).toBe(
      `systemd notify (READY=1 STATUS=reporting): ${fake} exited 1: Failed to notify init system: No such file or directory`,
    );
  });

  it("says once that systemd-notify is missing, then stops trying", async () => {
    const logs: string[] = [];
    const missing = path.join(dir, "no-such-notify");
    const n = new SystemdNotify({ socket: "/run/notify", command: missing, log: (l) => logs.push(l) });
    await n.ready("reporting");
    await n.status("reporting");
    expect(logs).toEqual([`systemd notify (READY=1 STATUS=reporting): ${missing}: ENOENT`]);
  });
});
