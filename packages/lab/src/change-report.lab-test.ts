/**
 * Change reports measured for real (issue 26 item 2): the lab in console mode (ConsoleLab: a
 * throwaway PostgreSQL, the real console, one tide-agent per host), echo streams through the VIP,
 * and two changes whose outcome the client driver knows exactly:
 *  - an unsafe one on purpose: a proxy holding k streams is drained, then deactivated with them
 *    still open (a reason given). The preview predicted k broken; the client sees k ECONNRESET; the
 *    version's change report counts k broken connections and names exactly those streams. The
 *    drain's own report names the same k streams as second-chance flows and says 0 broken.
 *  - a hash-field change (src_addr+src_port -> src_addr) with every stream flowing: 0 broken, and
 *    the streams that now reach their proxy through the old fields are named as alternate-hash
 *    flows, each on the proxy the client driver saw answer it.
 * Needs root, dataplane/build (tide-redirect with the `flows` command), the agent bundle and the
 * console build.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChangeReport, PoolChangeResult } from "@tide/contracts";
import { waitFor } from "@tide/devstack";
import { summarizeConnections, type ClientDriver, type ConnectionReport } from "./client-driver";
import { ConsoleLab } from "./console/console-lab-harness";
import { type Lab } from "./lab";

const PREFIX = "tide-crep";
/** At most CHANGE_REPORT_MAX_LISTED_FLOWS (50) of a kind can be named: fewer streams than that. */
const STREAMS = 45;
const log = (line: string) => console.log(`[change-report] ${line}`);

describe("change reports in the lab", () => {
  let h: ConsoleLab | undefined;
  let lab: Lab | undefined;
  let driver: ClientDriver | undefined;
  /**
   * Client ports of the first test's streams. The deactivate breaks some on purpose; their server
   * sides live on in the victim, retransmitting, and the client's resets to them can still take a
   * second chance inside the next change's window, where the report rightly lists them.
   */
  const earlierPorts = new Set<number>();

  beforeAll(async () => {
    h = await ConsoleLab.start({ prefix: PREFIX, tmpName: "tide-change-report-", log });
  });

  afterAll(async () => {
    try {
      await driver?.stop();
    } finally {
      await h?.close();
    }
  });

  /** The version's report once written (directors served it, then the settle time, then readings). */
  async function reportOf(versionId: string): Promise<ChangeReport> {
    return waitFor(
      `the change report of ${versionId}`,
      async () => {
        const r = await h!.rest("GET", `/tables/${versionId}/report`, ChangeReport);
        return r.status === "done" ? r : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
  }

  /** Until both lab directors serve the pool's table `version` (`what` names it in a timeout). */
  async function servedByBoth(what: string, version: number): Promise<void> {
    const poolId = lab!.consoleState!.poolId;
    await waitFor(
      `both directors to serve ${what}`,
      async () => {
        const s = await h!.client().poolSync(poolId);
        return s.version === version && s.servedBy === 2 ? s : undefined;
      },
      { timeoutMs: 30_000 },
    );
  }

  /** Each stream that failed, with what the driver knows of it (a failed run says which and how). */
  function logErrored(cs: readonly ConnectionReport[]): void {
    for (const c of cs.filter((c) => c.error)) {
      log(
        `stream ${c.localPort} on ${c.proxy}: ${c.error} (${c.echoed} of ${c.sent} bytes echoed, ` +
          `the last ${c.lastEchoAgoMs} ms ago)`,
      );
    }
  }

  /** The console host name of the proxy a stream's greeting named. */
  function hostOf(c: ConnectionReport): string {
    const proxies = lab!.consoleState!.proxies;
    return proxies[c.proxy!]?.hostname ?? c.proxy!;
  }

  const ports = (cs: readonly { localPort?: number | null; clientPort?: number }[]) =>
    cs.map((c) => c.localPort ?? c.clientPort).sort((a, b) => a! - b!);

  it("counts exactly the connections a deactivate broke, as predicted, and 0 for a drain", async () => {
    lab = await h!.up();
    const client = h!.client();
    const state = lab.consoleState!;
    driver = await lab.clientDriver();
    const opened = await driver.open(STREAMS);
    for (const c of opened) if (c.localPort !== null) earlierPorts.add(c.localPort);
    expect(opened.filter((c) => c.state === "open")).toHaveLength(STREAMS);
    const byProxy = summarizeConnections(opened).byProxy;
    log(`streams by proxy: ${JSON.stringify(byProxy)}`);
    // The proxy with the most streams is the one taken out.
    const [victim] = Object.entries(byProxy).sort((a, b) => b[1] - a[1])[0]!;
    const victimId = state.proxies[victim]!.proxyId;
    const onVictim = opened.filter((c) => c.proxy === victim);
    expect(onVictim.length).toBeGreaterThan(0);

    const drained = await client.proxyAction(victimId, "drain", "lab: change report test");
    // Let the drain reach the directors and its streams take their second chance.
    await servedByBoth("the drain", drained.tableVersion!.version);
    await new Promise((r) => setTimeout(r, 3000));
    expect(summarizeConnections(await driver.report()).errors).toEqual({});

    const off = await client.proxyAction(victimId, "deactivate", "lab: breaking its streams on purpose");
    const breaking = await reportOf(off.tableVersion!.id);
    const after = await driver.report();
    const reset = after.filter((c) => c.error === "ECONNRESET");
    log(
      `deactivate: predicted ${breaking.predicted?.broken.count} broken, the client saw ${reset.length} ` +
        `resets, the report counts ${breaking.report!.broken} (${breaking.report!.ended})`,
    );
    expect(ports(reset)).toEqual(ports(onVictim));
    expect(breaking.predicted?.broken.count).toBe(onVictim.length);
    expect(breaking.report).toMatchObject({ verdict: "broken", broken: onVictim.length });
    expect(ports(breaking.report!.listed.lastResort)).toEqual(ports(onVictim));
    // Every other stream kept echoing.
    expect(after.filter((c) => c.state === "open")).toHaveLength(STREAMS - onVictim.length);
    expect(breaking.report!.directors.every((d) => d.servedAt !== null)).toBe(true);

    // The drain broke nothing, and its report names the streams that took their second chance.
    const drain = await reportOf(drained.tableVersion!.id);
    expect(drain.report).toMatchObject({ verdict: "none_broken", broken: 0 });
    expect(drain.report!.ended).toBe(`v${off.tableVersion!.version} replaced it`);
    expect(ports(drain.report!.listed.secondChance)).toEqual(ports(onVictim));

    // Back in rotation for the next test, with no stream open, and served: streams opened while a
    // director still forwards by the deactivate's table never land on the victim.
    await driver.close();
    await client.proxyAction(victimId, "fill", "lab: back");
    const back = await client.proxyAction(victimId, "activate", "lab: back");
    await servedByBoth("the victim's return", back.tableVersion!.version);
  });

  it("says 0 broken for a hash-field change and names the flows that kept their proxy by the old fields", async () => {
    const poolId = lab!.consoleState!.poolId;
    const opened = await driver!.open(STREAMS);
    expect(opened.filter((c) => c.state === "open")).toHaveLength(STREAMS);

    const changed = await h!.rest("PUT", `/pools/${poolId}/hash-fields`, PoolChangeResult, {
      hashFields: ["src_addr"],
      reason: "lab: change report test",
    });
    const report = await reportOf(changed.tableVersion!.id);
    const ours = new Set(opened.map((c) => c.id));
    const during = (await driver!.report()).filter((c) => ours.has(c.id));
    logErrored(during);
    expect(summarizeConnections(during).errors).toEqual({});
    const r = report.report!;
    log(
      `hash change: ${r.flows.secondChance} second-chance flows, ${r.flows.alternateHash} by the old ` +
        `fields, ${r.broken} broken (${r.ended})`,
    );
    expect(r).toMatchObject({ verdict: "none_broken", broken: 0, atLeast: false });
    // src_addr only: every stream of the one client address hashes to one row now, whose primary
    // gets new connections. Every stream on another proxy takes a hop; those on neither of the
    // row's two proxies take the old fields' pair.
    const fresh = await driver!.open(1);
    const primary = fresh[0]!.proxy!;
    const hopped = during.filter((c) => c.proxy !== primary);
    log(
      `streams by proxy ${JSON.stringify(summarizeConnections(during).byProxy)}, new flows land on ${primary}; ` +
        `per proxy: ${JSON.stringify(r.proxies.map((p) => [p.hostname, p.flows, p.packets]))}`,
    );
    // Every flow listed is one of the driver's; those of this test's streams are exactly the ones
    // that hopped (the first test's broken streams may add some: earlierPorts).
    const byPort = new Map(during.map((c) => [c.localPort, c]));
    for (const f of [...r.listed.secondChance, ...r.listed.alternateHash]) {
      expect(byPort.has(f.clientPort) || earlierPorts.has(f.clientPort), `flow ${f.clientPort}`).toBe(true);
    }
    const thisTest = <T extends { clientPort: number }>(flows: readonly T[]) =>
      flows.filter((f) => byPort.has(f.clientPort));
    expect(ports(thisTest(r.listed.secondChance))).toEqual(ports(hopped));
    expect(thisTest(r.listed.alternateHash).length).toBeGreaterThan(0);
    for (const f of thisTest(r.listed.alternateHash)) {
      const stream = byPort.get(f.clientPort);
      expect(f.hostname).toBe(hostOf(stream!));
      expect(stream!.proxy).not.toBe(primary);
    }
    const closed = await driver!.close();
    logErrored(closed);
    expect(summarizeConnections(closed).errors).toEqual({});
  });
});
