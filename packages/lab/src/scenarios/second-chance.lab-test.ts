/**
 * GLB's promise, proved with real packets in the glb lab (root): proxies are drained, filled,
 * added and removed, and directors come and go, without breaking one established connection.
 *
 *   drain/fill/director loss   100 long-lived streams (data both ways), then 40 + 40 more
 *   PMTU                        a smaller link on the return path; ICMP reaches the flow's proxy
 *   SYN flood                   tens of thousands of spoofed SYNs with syncookies; real clients
 *                               connect; a cookie ACK sent after a table change is forwarded to
 *                               the proxy that sent the cookie and accepted there
 * Each scenario prints what it counted (opened, completed, reset) for the report.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { summarizeConnections, type ClientDriver, type ConnectionReport } from "../client-driver";
import { type Lab } from "../lab";
import { down, up } from "../lab-lifecycle";
import type { RedirectCounters } from "../redirect-control";

const SYN_FLOOD = fileURLToPath(new URL("../../assets/syn-flood.py", import.meta.url));
const COOKIE_CLIENT = fileURLToPath(new URL("../../assets/cookie-client.py", import.meta.url));
const PYTHON = "/usr/bin/python3";

async function redirectTotals(lab: Lab): Promise<Record<string, RedirectCounters>> {
  const out: Record<string, RedirectCounters> = {};
  for (const p of lab.proxies) out[p] = await lab.redirectControl(p).counters();
  return out;
}

function delta(
  after: Record<string, RedirectCounters>,
  before: Record<string, RedirectCounters>,
  key: keyof RedirectCounters,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of Object.keys(after)) out[p] = Number(after[p]![key]) - Number(before[p]?.[key] ?? 0);
  return out;
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

/** Every connection is open and has echoed something in the last `withinMs`. */
function expectAllStreaming(reports: ConnectionReport[], withinMs = 1_500) {
  for (const c of reports) {
    expect(c.state, JSON.stringify(c)).toBe("open");
    expect(c.error, JSON.stringify(c)).toBeNull();
    expect(c.lastEchoAgoMs ?? Infinity, JSON.stringify(c)).toBeLessThan(withinMs);
  }
}

function report(name: string, reports: ConnectionReport[]) {
  const s = summarizeConnections(reports);
  const reset = Object.entries(s.errors)
    .filter(([e]) => e.includes("RESET") || e === "EPIPE")
    .reduce((a, [, n]) => a + n, 0);
  console.log(
    `[${name}] opened ${s.total}, completed ${s.byState.closed ?? 0}, reset ${reset}, errors ` +
      `${JSON.stringify(s.errors)}, by proxy ${JSON.stringify(s.byProxy)}, bytes sent ${s.sent}, echoed ${s.echoed}`,
  );
}

describe("second chance in the glb lab", () => {
  let lab: Lab;
  let driver: ClientDriver;

  beforeAll(async () => {
    if (process.getuid?.() !== 0) throw new Error("the lab needs root (network namespaces, BPF)");
    lab = await up({ fresh: true, redirect: true, states: { prx3: "inactive" } });
    driver = await lab.clientDriver();
  });

  afterAll(async () => {
    await driver?.stop().catch(() => undefined);
    await down();
  });

  // Every test starts with both directors serving: a test that stops one (director loss) and then
  // fails must not leave the tests after it with one director and a half-empty ECMP route.
  afterEach(async () => {
    if (!lab) return;
    await lab.startDirector("dir2"); // no-op while it runs
    await lab.setDirectorEcmp("dir2", true);
  });

  it("drains, fills and loses a director without breaking any of 180 connections", async () => {
    // 100 long-lived streams over prx1 and prx2 (prx3 is not in service yet).
    const first = await driver.open(100, { intervalMs: 100 });
    expect(summarizeConnections(first).byState).toEqual({ open: 100 });
    expect(Object.keys(summarizeConnections(first).byProxy).sort()).toEqual(["prx1", "prx2"]);
    const onPrx1 = first.filter((c) => c.proxy === "prx1").map((c) => c.id);
    expect(onPrx1.length).toBeGreaterThan(10);
    await sleep(1_000);
    expectAllStreaming(await driver.report());

    // Drain prx1: new connections avoid it; its 100-connection share keeps working via second chance.
    const beforeDrain = await redirectTotals(lab);
    await lab.pushTable({ prx1: "draining", prx3: "inactive" });
    const second = await driver.open(40, { intervalMs: 100 });
    expect(summarizeConnections(second).byState).toEqual({ open: 40 });
    expect(summarizeConnections(second).byProxy.prx1 ?? 0).toBe(0);
    const echoedAtDrain = new Map((await driver.report(onPrx1)).map((c) => [c.id, c.echoed]));
    await sleep(3_000);
    const drained = await driver.report(onPrx1);
    for (const c of drained) expect(c.echoed, JSON.stringify(c)).toBeGreaterThan(echoedAtDrain.get(c.id)!);
    expectAllStreaming(await driver.report());
    const afterDrain = await redirectTotals(lab);
    // Packets of prx1's flows now reach prx2 first, which forwards them to prx1 (the second hop).
    expect(delta(afterDrain, beforeDrain, "forwarded_to_alternate").prx2).toBeGreaterThan(0);
    expect(delta(afterDrain, beforeDrain, "accepted_established").prx1).toBeGreaterThan(0);

    // prx1's connections end (gracefully); then prx1 leaves the table.
    const closedPrx1 = await driver.close({ ids: onPrx1 });
    expect(summarizeConnections(closedPrx1).byState).toEqual({ closed: onPrx1.length });
    expect(summarizeConnections(closedPrx1).errors).toEqual({});
    await lab.pushTable({ prx1: "inactive", prx3: "inactive" });
    await sleep(1_000);

    // Fill prx3: rows move to it; prx2's connections in those rows reach prx2 via second chance.
    const beforeFill = await redirectTotals(lab);
    await lab.pushTable({ prx1: "inactive", prx3: "filling" });
    await sleep(2_000);
    expectAllStreaming(await driver.report());
    expect(delta(await redirectTotals(lab), beforeFill, "forwarded_to_alternate").prx3).toBeGreaterThan(0);
    await lab.pushTable({ prx1: "inactive", prx3: "active" });
    const third = await driver.open(40, { intervalMs: 100 });
    expect(summarizeConnections(third).byState).toEqual({ open: 40 });
    expect(summarizeConnections(third).byProxy.prx3 ?? 0).toBeGreaterThan(0);
    expect(summarizeConnections(third).byProxy.prx1 ?? 0).toBe(0);

    // Lose a director: the router stops using it, then it stops. The other has the same table.
    const dir1Before = (await lab.directorTotals()).dir1!.forwarded_packets;
    await lab.setDirectorEcmp("dir2", false);
    await lab.stopDirector("dir2");
    await sleep(3_000);
    expectAllStreaming(await driver.report());
    expect((await lab.directorTotals()).dir1!.forwarded_packets).toBeGreaterThan(dir1Before);

    const all = await driver.close();
    const s = summarizeConnections(all);
    report("drain/fill/director", [...closedPrx1, ...all]);
    expect(s.errors).toEqual({});
    expect(s.byState).toEqual({ closed: 180 - onPrx1.length });
    expect(s.echoed).toBe(s.sent);
  });

  it("delivers frag-needed to the proxy that owns the flow so large responses complete", async () => {
    await lab.pushTable({});
    const dirBefore = await lab.directorTotals();
    const redirBefore = await redirectTotals(lab);
    const icmpBefore = (await lab.netCounters("router")).IcmpMsg?.OutType3 ?? 0;
    // Only the router's end of the client link shrinks: responses (proxy -> client) are too big
    // for it and the router answers with frag-needed to the VIP, which the directors must hash
    // like the flow. Requests stay small: a veth also drops received frames above its MTU, so
    // the client's own big packets would vanish without any ICMP (an MTU mismatch, not PMTU).
    await lab.setLinkMtu("client", 1280, "router");
    try {
      const responses = [];
      for (let i = 0; i < 6; i++) responses.push(await driver.http("/bytes/300000", { timeoutMs: 20_000 }));
      for (const r of responses) {
        expect(r.error, JSON.stringify(r)).toBeNull();
        expect(r.status).toBe(200);
        expect(r.bytes).toBe(300_000);
      }
      const byProxy = new Set(responses.map((r) => r.proxy));
      const dirAfter = await lab.directorTotals();
      const pmtu = lab.directors.reduce(
        (n, d) => n + dirAfter[d]!.forwarded_icmp_pmtu - dirBefore[d]!.forwarded_icmp_pmtu,
        0,
      );
      const sentByRouter = ((await lab.netCounters("router")).IcmpMsg?.OutType3 ?? 0) - icmpBefore;
      const accepted = delta(await redirectTotals(lab), redirBefore, "accepted_pmtu");
      expect(sentByRouter).toBeGreaterThan(0);
      expect(pmtu).toBeGreaterThan(0);
      // Every frag-needed the directors forwarded was accepted by a proxy owning the flow: none
      // went to a proxy that had to pass it on or drop it.
      expect(sum(accepted)).toBe(pmtu);
      console.log(
        `[pmtu] router->client MTU 1280: ${responses.length} x 300 KB responses complete from ` +
          `${[...byProxy].join(",")}; router sent ${sentByRouter} frag-needed, directors forwarded ${pmtu}, ` +
          `proxies accepted ${JSON.stringify(accepted)}`,
      );
    } finally {
      await lab.setLinkMtu("client", 1500, "router");
    }
  });

  it("keeps serving real clients through a SYN flood with syncookies", async () => {
    for (const p of lab.proxies) await lab.setProxySysctls(p, { tcpSyncookies: 1, tcpMaxSynBacklog: 128 });
    const before = await Promise.all(lab.proxies.map((p) => lab.netCounters(p)));
    const flood = lab.exec("client", [PYTHON, SYN_FLOOD, lab.vip, "80", "40000", "20", "10.150"], {
      timeoutMs: 60_000,
    });
    await sleep(500);
    const real = await driver.open(20, { connectTimeoutMs: 10_000 });
    const { stdout } = await flood;
    const sent = (JSON.parse(stdout) as { sent: number; seconds: number }).sent;
    expect(sent).toBeGreaterThanOrEqual(20_000);
    expect(summarizeConnections(real).byState).toEqual({ open: 20 });
    const after = await Promise.all(lab.proxies.map((p) => lab.netCounters(p)));
    const cookies = after.reduce(
      (n, c, i) => n + (c.TcpExt?.SyncookiesSent ?? 0) - (before[i]!.TcpExt?.SyncookiesSent ?? 0),
      0,
    );
    expect(cookies).toBeGreaterThan(0);
    const closed = await driver.close();
    report("syn flood", closed);
    console.log(`[syn flood] ${stdout.trim()} spoofed SYNs; proxies sent ${cookies} SYN cookies`);
    expect(summarizeConnections(closed).errors).toEqual({});
  });

  it("forwards a cookie ACK that a table change moved to the proxy that sent the cookie", async () => {
    await lab.pushTable({});
    // Only prx1 answers with cookies (always); the others refuse cookie ACKs. One kernel means one
    // cookie secret, so this is how the lab tells "the proxy that sent the cookie" apart.
    await lab.setProxySysctls("prx1", { tcpSyncookies: 2 });
    for (const p of ["prx2", "prx3"]) await lab.setProxySysctls(p, { tcpSyncookies: 0 });
    const client = "10.100.1.2";
    // A source port whose flow prx1 owns now, and that a drain of prx1 moves elsewhere.
    const dir = lab.directorControl("dir1");
    let sport = 0;
    for (let p = 40000; p < 41000 && !sport; p++) {
      const e = await dir.explain({
        src_addr: client,
        dst_addr: lab.vip,
        protocol: "tcp",
        src_port: p,
        dst_port: 80,
      });
      if (lab.proxyByAddress(e.primary) === "prx1") sport = p;
    }
    expect(sport).toBeGreaterThan(0);
    const state = mkdtempSync(join(tmpdir(), "tide-cookie-"));
    // The client kernel would reset the half-open handshake: drop its RSTs for this port.
    await lab.exec("client", ["nft", "add", "table", "inet", "tide_cookie"]);
    await lab.exec("client", [
      "nft",
      "add chain inet tide_cookie out { type filter hook output priority 0 ; }",
    ]);
    await lab.exec("client", ["nft", `add rule inet tide_cookie out tcp sport ${sport} tcp flags rst drop`]);
    try {
      const before = await redirectTotals(lab);
      const syn = await lab.exec("client", [
        PYTHON,
        COOKIE_CLIENT,
        "syn",
        client,
        String(sport),
        lab.vip,
        "80",
        join(state, "s"),
      ]);
      expect(JSON.parse(syn.stdout).ok).toBe(true);
      await lab.pushTable({ prx1: "draining" });
      const moved = await dir.explain({
        src_addr: client,
        dst_addr: lab.vip,
        protocol: "tcp",
        src_port: sport,
        dst_port: 80,
      });
      const newPrimary = lab.proxyByAddress(moved.primary)!;
      expect(newPrimary).not.toBe("prx1");
      const ack = await lab.exec("client", [
        PYTHON,
        COOKIE_CLIENT,
        "ack",
        client,
        String(sport),
        lab.vip,
        "80",
        join(state, "s"),
      ]);
      const reply = JSON.parse(ack.stdout) as { ok: boolean; reply?: string; error?: string };
      expect(reply.ok, ack.stdout).toBe(true);
      expect(reply.reply).toMatch(/^HTTP\/1\.[01] 200/);
      const after = await redirectTotals(lab);
      expect(delta(after, before, "forwarded_to_alternate")[newPrimary]).toBeGreaterThanOrEqual(1);
      expect(delta(after, before, "accepted_syn_cookie").prx1).toBe(1);
      console.log(
        `[cookie] SYN to prx1, table change, ACK reached ${newPrimary}, forwarded to prx1, accepted`,
      );
    } finally {
      await lab.exec("client", ["nft", "delete", "table", "inet", "tide_cookie"]).catch(() => undefined);
      rmSync(state, { recursive: true, force: true });
      for (const p of lab.proxies) await lab.setProxySysctls(p, { tcpSyncookies: 1 });
    }
  });
});
