import { spawn } from "node:child_process";

/**
 * Tells systemd the console is ready (Type=notify), when it runs under systemd (NOTIFY_SOCKET).
 * Node cannot send on a Unix datagram socket, so systemd-notify sends it as our child; the unit
 * has NotifyAccess=all to accept a message from a process other than the main one. systemd-notify
 * (since systemd 246) waits until the manager has processed the message (sd_notify_barrier), so
 * the manager still finds the sender in the unit's cgroup: the race of older versions, where the
 * sender exited first and the message was dropped, does not apply (Debian 12: 252, 13: 257).
 * Resolves once it exited; a failure is logged, not thrown: systemd then times the start out.
 */
export function notifyReady(notifySocket: string | undefined, status: string): Promise<void> {
  if (!notifySocket) return Promise.resolve();
  return new Promise((resolve) => {
    const child = spawn("systemd-notify", ["--ready", `--status=${status}`], { stdio: "inherit" });
    child.on("error", (e) => {
      console.error(`tide-console: systemd-notify failed: ${e.message}`);
      resolve();
    });
    child.on("exit", (code) => {
      if (code !== 0) console.error(`tide-console: systemd-notify exited with ${code}`);
      resolve();
    });
  });
}
