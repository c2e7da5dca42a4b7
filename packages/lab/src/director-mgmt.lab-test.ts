/**
 * The director hosts' management links (root): a lab of its own (prefix tide-mg), then from each
 * director namespace the real tide-healthcheck checks every proxy the way the director host's agent
 * does: GUE (an ICMP echo wrapped in GUE to the proxy's port 19523, decapsulated by tide-redirect
 * and answered by the proxy's kernel to the director's management address), TCP and HTTP to the
 * proxy's own address. All pass, the af_packet ports see none of it (their rx counters do not move
 * and they keep no kernel address), the VIP still answers through the directors, and down leaves
 * no namespace behind.
 *
 * Needs dataplane/build/tide-director, tide-redirect and tide-healthcheck (make -C dataplane).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { HealthcheckReady, HealthcheckResult, type HealthcheckRequest } from "@tide/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { labEnv } from "./env";
import { listNamespaces, runCommand } from "./host-command";
import { type Lab } from "./lab";
import { up } from "./lab-lifecycle";
import { type DirectorNode } from "./topology";

const PREFIX = "tide-mg";
const CHECK_TIMEOUT_MS = 2_000;
const log = (line: string) => console.log(`[director-mgmt] ${line}`);

/** One tide-healthcheck in a director namespace, as the agent runs it (--netns, JSON lines). */
class Checker {
  readonly ready: Promise<HealthcheckReady>;
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;
  private readonly waiting = new Map<number, (r: HealthcheckResult) => void>();
  private nextId = 1;

  constructor(binary: string, namespace: string) {
    this.child = spawn(binary, ["--netns", namespace], { stdio: ["pipe", "pipe", "inherit"] });
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
    this.child.stdin!.on("error", () => {});
    let onReady: (r: HealthcheckReady) => void = () => {};
    this.ready = new Promise((resolve) => (onReady = resolve));
    let first = true;
    createInterface({ input: this.child.stdout! }).on("line", (line) => {
      const json: unknown = JSON.parse(line);
      if (first) {
        first = false;
        onReady(HealthcheckReady.parse(json));
        return;
      }
      const r = HealthcheckResult.parse(json);
      this.waiting.get(r.id)?.(r);
      this.waiting.delete(r.id);
    });
  }

  check(req: Omit<HealthcheckRequest, "id">): Promise<HealthcheckResult> {
    const id = this.nextId++;
    const result = new Promise<HealthcheckResult>((resolve) => this.waiting.set(id, resolve));
    this.child.stdin!.write(`${JSON.stringify({ id, ...req } satisfies HealthcheckRequest)}\n`);
    return result;
  }

  end(): Promise<number | null> {
    this.child.stdin!.end();
    return this.exited;
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill("SIGKILL");
  }
}

async function ipJson<T>(argv: string[]): Promise<T> {
  return JSON.parse((await runCommand(["ip", "-j", ...argv])).stdout) as T;
}

describe("director hosts' management links", () => {
  let lab: Lab | undefined;
  const checkers: Checker[] = [];

  beforeAll(async () => {
    if (process.getuid?.() !== 0) throw new Error("the lab needs root (network namespaces, BPF)");
    for (const bin of [labEnv.directorBin, labEnv.redirectBin, labEnv.healthcheckBin]) {
      if (!existsSync(bin)) throw new Error(`${bin} is missing: make -C dataplane`);
    }
    if ((await listNamespaces()).some((n) => n.startsWith(`${PREFIX}-`))) {
      throw new Error(`namespaces ${PREFIX}-* exist: another run of this test is going on or crashed`);
    }
    lab = await up({ prefix: PREFIX, fresh: true, redirect: true, log });
  });

  afterAll(async () => {
    for (const c of checkers) c.kill();
    // Safety net when a test failed before the teardown test ran.
    await lab?.down();
  });

  it("gives each director's kernel an address on mgmt0 only, and a default route through it", async () => {
    for (const d of lab!.topology.directors) {
      type Addr = { ifname: string; addr_info: { family: string; local: string; prefixlen: number }[] };
      const addrs = await ipJson<Addr[]>(["-n", d.namespace, "-4", "addr", "show"]);
      const v4 = Object.fromEntries(addrs.map((a) => [a.ifname, a.addr_info.map((i) => i.local)]));
      expect(v4).toEqual({ lo: ["127.0.0.1"], mgmt0: [d.mgmt.address] });
      const routes = await ipJson<{ dst: string; gateway?: string; dev: string }[]>([
        "-n",
        d.namespace,
        "route",
        "show",
        "default",
      ]);
      expect(routes).toMatchObject([{ dst: "default", gateway: d.mgmt.gateway, dev: "mgmt0" }]);
      expect(await lab!.getSysctl(d.name, "net.ipv4.ip_forward")).toBe("0");
      expect(await lab!.getSysctl(d.name, "net.ipv4.conf.mgmt0.rp_filter")).toBe("0");
    }
  });

  it("passes gue, tcp and http checks from every director to every proxy", async () => {
    const topology = lab!.topology;
    const rxBefore = await lab!.directorTotals();
    const icmpBefore: Record<string, number> = {};
    for (const p of lab!.proxies)
      icmpBefore[p] = (await lab!.redirectControl(p).counters()).accepted_icmp ?? 0;

    const run = async (d: DirectorNode) => {
      const checker = new Checker(labEnv.healthcheckBin, d.namespace);
      checkers.push(checker);
      expect(await checker.ready).toMatchObject({ ready: true, netns: d.namespace });
      const rows = await Promise.all(
        topology.proxies.map(async (p) => {
          const target = p.address;
          const [gue, tcp, http] = await Promise.all([
            checker.check({ kind: "gue", target, port: topology.ports.gue, timeoutMs: CHECK_TIMEOUT_MS }),
            checker.check({ kind: "tcp", target, port: topology.ports.http, timeoutMs: CHECK_TIMEOUT_MS }),
            checker.check({
              kind: "http",
              target,
              port: topology.ports.http,
              path: "/",
              expectStatus: 200,
              timeoutMs: CHECK_TIMEOUT_MS,
            }),
          ]);
          return { director: d.name, proxy: p.name, gue, tcp, http };
        }),
      );
      expect(await checker.end()).toBe(0);
      return rows;
    };
    const rows = (await Promise.all(topology.directors.map(run))).flat();
    for (const r of rows) {
      log(
        `${r.director} (${topology.directors.find((d) => d.name === r.director)!.mgmt.address}) -> ` +
          `${r.proxy}: gue ${r.gue.detail} ${r.gue.latencyUs} µs, tcp ${r.tcp.detail} ${r.tcp.latencyUs} µs, ` +
          `http ${r.http.detail} ${r.http.latencyUs} µs`,
      );
    }
    for (const r of rows) {
      const where = `${r.director} -> ${r.proxy}`;
      expect(r.gue, where).toMatchObject({ ok: true, detail: "echo reply", latencyUs: expect.any(Number) });
      expect(r.tcp, where).toMatchObject({ ok: true, detail: "connected" });
      expect(r.http, where).toMatchObject({ ok: true, detail: "HTTP 200" });
    }
    expect(rows).toHaveLength(topology.directors.length * topology.proxies.length);

    // The echoes went through tide-redirect's decapsulation: one per director on every proxy.
    for (const p of lab!.proxies) {
      const accepted = (await lab!.redirectControl(p).counters()).accepted_icmp ?? 0;
      expect(accepted - icmpBefore[p]!, p).toBeGreaterThanOrEqual(topology.directors.length);
    }
    // None of it reached the af_packet ports: the directors received nothing meanwhile.
    const rxAfter = await lab!.directorTotals();
    for (const d of lab!.directors) expect(rxAfter[d]!.rx_packets - rxBefore[d]!.rx_packets, d).toBe(0);
  });

  it("still carries the VIP through the directors", async () => {
    const before = await lab!.directorTotals();
    const driver = await lab!.clientDriver();
    try {
      for (let i = 0; i < 4; i++) {
        const http = await driver.http("/");
        expect(http.status).toBe(200);
        expect(lab!.proxies).toContain(http.proxy);
      }
    } finally {
      await driver.stop();
    }
    const { stdout } = await lab!.exec("client", ["ping", "-c", "3", "-i", "0.2", "-W", "2", lab!.vip]);
    expect(stdout).toMatch(/3 packets transmitted, 3 received/);
    const after = await lab!.directorTotals();
    const forwarded = lab!.directors.reduce(
      (n, d) => n + after[d]!.forwarded_packets - (before[d]?.forwarded_packets ?? 0),
      0,
    );
    expect(forwarded).toBeGreaterThanOrEqual(4 * 3 + 3); // SYN, ACK, request ... and 3 echoes at least
  });

  it("down removes every namespace of the lab", async () => {
    await lab!.down();
    lab = undefined;
    expect((await listNamespaces()).filter((n) => n.startsWith(`${PREFIX}-`))).toEqual([]);
    const rootLinks = await ipJson<{ ifname: string }[]>(["link", "show"]);
    expect(rootLinks.filter((l) => /-mgmt$|^mgmt0$|^(dir|prx)\d$/.test(l.ifname))).toEqual([]);
  });
});
