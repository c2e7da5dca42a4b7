/**
 * A lab's proxies: tide-redirect on each proxy's veth (and its control client) and the test
 * servers behind it. Lab (lab.ts) hands these methods out under its own names.
 */
import { readFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { waitForSocket } from "./control-socket";
import { LabError } from "./errors";
import { redirectArgv, testServerArgv } from "./lab-files";
import { isAlive, spawnDetached, stopProcess } from "./lab-process";
import { type LabRuntime } from "./lab-runtime";
import { labWaitFor } from "./lab-wait";
import { RedirectControl } from "./redirect-control";
import { proxyNode } from "./topology";

export const TEST_SERVER_SCRIPT = fileURLToPath(new URL("../assets/test-server.mjs", import.meta.url));
const REDIRECT_START_TIMEOUT_MS = 15_000;
const SERVER_START_TIMEOUT_MS = 10_000;

export class LabProxies {
  private readonly clients = new Map<string, RedirectControl>();

  constructor(private readonly rt: LabRuntime) {}

  /** Control client of a proxy's tide-redirect; not_running when the lab runs without it. */
  redirectControl(proxy: string): RedirectControl {
    proxyNode(this.rt.topology, proxy);
    if (!this.rt.state.redirect) {
      throw new LabError(
        "not_running",
        "tide-redirect is not running in this lab (not built, or redirect: false)",
      );
    }
    let c = this.clients.get(proxy);
    if (!c) {
      c = new RedirectControl(proxy, this.rt.paths.redirectSocket(proxy));
      this.clients.set(proxy, c);
    }
    return c;
  }

  /** Starts tide-redirect on a proxy's veth and waits for its socket. */
  async startRedirect(proxy: string): Promise<void> {
    const { topology, paths, env } = this.rt;
    const p = proxyNode(topology, proxy);
    const key = `${proxy}.redirect`;
    const socket = paths.redirectSocket(proxy);
    rmSync(socket, { force: true });
    const rec = this.rt.record(
      spawnDetached({
        key,
        kind: "redirect",
        node: proxy,
        argv: redirectArgv(topology, p, env.redirectBin, paths),
        log: paths.log(key),
      }),
    );
    try {
      await waitForSocket(socket, REDIRECT_START_TIMEOUT_MS, () => isAlive(rec));
    } catch (e) {
      throw this.rt.startFailure(rec, e);
    }
  }

  /** Starts a proxy's test server and waits for its "ready" line. */
  async startTestServer(proxy: string, backlog = 511): Promise<void> {
    const { topology, paths, env } = this.rt;
    const p = proxyNode(topology, proxy);
    const key = `${proxy}.server`;
    const log = paths.log(key);
    rmSync(log, { force: true });
    const argv = testServerArgv(topology, p, { nodeBin: env.nodeBin, script: TEST_SERVER_SCRIPT, backlog });
    const rec = this.rt.record(spawnDetached({ key, kind: "test-server", node: proxy, argv, log }));
    try {
      await labWaitFor(
        `${key} to log "ready ${proxy}"`,
        () => {
          if (readLog(log).includes(`ready ${proxy}`)) return true;
          if (!isAlive(rec)) throw new LabError("process_exited", `${key} exited`);
          return false;
        },
        { timeoutMs: SERVER_START_TIMEOUT_MS, intervalMs: 25 },
      );
    } catch (e) {
      throw this.rt.startFailure(rec, e);
    }
  }

  /** Restarts a proxy's test server (after changing somaxconn; its connections are reset). */
  async restartTestServer(proxy: string, backlog?: number): Promise<void> {
    const key = `${proxy}.server`;
    const rec = this.rt.process(key);
    if (rec) {
      await stopProcess(rec);
      this.rt.forget(key);
    }
    await this.startTestServer(
      proxy,
      backlog ?? (this.rt.state.options.serverBacklog as number | undefined) ?? 511,
    );
  }

  /** Closes the redirect control connections; tide-redirect keeps running. */
  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}

function readLog(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
