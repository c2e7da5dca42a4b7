/**
 * A lab's proxies: tide-redirect on each proxy's veth (and its control client) and the test
 * servers behind it. Lab (lab.ts) hands these methods out under its own names.
 */
import { readFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { waitForSocket } from "./control-socket";
import { LabError } from "./errors";
import { redirectArgv, testServerArgv } from "./lab-files";
import { isAlive, respawn, spawnDetached, stopProcess, type LabProcessRecord } from "./lab-process";
import { type LabRuntime } from "./lab-runtime";
import { labWaitFor } from "./lab-wait";
import { runCommand } from "./host-command";
import { parseRedirectFilters, RedirectControl } from "./redirect-control";
import { proxyNode } from "./topology";

export const TEST_SERVER_SCRIPT = fileURLToPath(new URL("../assets/test-server.mjs", import.meta.url));
/**
 * Ceilings for a daemon's start, ms. Each wait ends as soon as the daemon is ready (its socket, its
 * "ready" line) or has exited (a failure at once), so these bound only a daemon that hangs: on a
 * busy host (the compose tier beside CPU burners) a test server took over 10 s to start, and a
 * fixed 10 s made the lab fail and restart in a loop (issue 34).
 */
const REDIRECT_START_TIMEOUT_MS = 60_000;
const SERVER_START_TIMEOUT_MS = 60_000;

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
    await this.redirectReady(proxy, rec);
  }

  /**
   * Restarts a proxy's tide-redirect with the command it was started with (SIGTERM: it detaches
   * its BPF program; then as startRedirect). Between the two, GUE to this proxy is not
   * decapsulated: its flows stall for that time (about a second), they are not reset.
   */
  async restartRedirect(proxy: string): Promise<LabProcessRecord> {
    const key = `${proxy}.redirect`;
    const old = this.recorded(key);
    this.clients.get(proxy)?.close();
    this.clients.delete(proxy);
    await stopProcess(old);
    await this.detachLeftover(proxy);
    rmSync(this.rt.paths.redirectSocket(proxy), { force: true });
    const rec = this.rt.record(respawn(old));
    await this.redirectReady(proxy, rec);
    return rec;
  }

  /**
   * Removes the tc program a killed tide-redirect left on the proxy's veth (a stopped one detached
   * it itself): a new tide-redirect refuses to attach beside it. Measured: SIGKILL leaves the
   * filter and the clsact qdisc; deleting the filter is enough.
   */
  private async detachLeftover(proxy: string): Promise<void> {
    const p = proxyNode(this.rt.topology, proxy);
    const tc = ["tc", "-n", p.namespace, "filter"];
    const { stdout } = await runCommand([...tc, "show", "dev", p.ifname, "ingress"]);
    for (const f of parseRedirectFilters(stdout)) {
      await runCommand([
        ...tc,
        "del",
        "dev",
        p.ifname,
        "ingress",
        "protocol",
        "all",
        "pref",
        String(f.pref),
        "handle",
        f.handle,
        "bpf",
      ]);
    }
  }

  private async redirectReady(proxy: string, rec: LabProcessRecord): Promise<void> {
    try {
      await waitForSocket(this.rt.paths.redirectSocket(proxy), REDIRECT_START_TIMEOUT_MS, () => isAlive(rec));
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
    await this.serverReady(proxy, rec, 0);
  }

  /**
   * Restarts a proxy's test server with the command it was started with (its connections are
   * reset; the log is kept and appended to).
   */
  async restartServer(proxy: string): Promise<LabProcessRecord> {
    const old = this.recorded(`${proxy}.server`);
    await stopProcess(old);
    const from = readLog(old.log).length;
    const rec = this.rt.record(respawn(old));
    await this.serverReady(proxy, rec, from);
    return rec;
  }

  /** Waits for a test server's "ready <proxy>" line, written after offset `from` of its log. */
  private async serverReady(proxy: string, rec: LabProcessRecord, from: number): Promise<void> {
    try {
      await labWaitFor(
        `${rec.key} to log "ready ${proxy}"`,
        () => {
          if (readLog(rec.log).slice(from).includes(`ready ${proxy}`)) return true;
          if (!isAlive(rec)) throw new LabError("process_exited", `${rec.key} exited`);
          return false;
        },
        { timeoutMs: SERVER_START_TIMEOUT_MS, intervalMs: 25 },
      );
    } catch (e) {
      throw this.rt.startFailure(rec, e);
    }
  }

  private recorded(key: string): LabProcessRecord {
    const rec = this.rt.process(key);
    if (!rec) throw new LabError("not_running", `${key} has no recorded process`);
    return rec;
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
