/**
 * Incident 3 (pmtu-blackhole) end to end, one of the cases ../incidents.lab-test.ts runs. The agent
 * probes from its own (root) namespace, so @tide/lab's pmtu-gateway.ts connects root to the
 * incident's router ra through a gateway namespace; the blackhole and the MTU mismatch share the
 * incident's namespace names, so they run one after the other, on two target addresses.
 */
import { expect } from "vitest";
import { runInNamespace } from "@tide/lab";
import { pmtuBlackhole, createPmtuGateway, type PmtuGateway } from "@tide/lab/incidents";
import { poll } from "../../harness/end-to-end-harness";
import { expectResolvedHistory, secondsBetween } from "../../harness/incident-assertions";
import { OPEN_TIMEOUT_MS, RESOLVE_TIMEOUT_MS, type IncidentCase } from "../incident-case";

/** The PMTU server's address (blackhole phase) and a second address of it (MTU mismatch phase). */
const PMTU_TARGET_BLACKHOLE = "10.201.33.2";
const PMTU_TARGET_MISMATCH = "10.201.33.3";
let gateway: PmtuGateway | undefined;

export const incidentTest: IncidentCase = {
  title:
    "PMTU: a blackhole (frag-needed dropped), then an MTU mismatch on one link: pmtu_blackhole for the target; the remedy resolves it",
  agent: {
    pmtuTargets: [PMTU_TARGET_BLACKHOLE, PMTU_TARGET_MISMATCH],
    pmtuSizes: [1400, 4000],
    pmtuIntervalMs: 5_000,
  },
  // before the agent starts: its PMTU targets must route into the lab from the first check
  async beforeAgent() {
    const gw = await createPmtuGateway();
    gateway = gw;
    return () => gw.remove();
  },
  async run(c) {
    const { env: e, summary, mark, seconds } = c;
    const gw = gateway!;
    const phase = async (
      name: string,
      target: string,
      options: pmtuBlackhole.PmtuOptions,
      prepare: (h: pmtuBlackhole.PmtuHandle) => Promise<void>,
      remedied: (h: pmtuBlackhole.PmtuHandle) => Promise<void>,
    ) => {
      const h = await pmtuBlackhole.setup(options);
      try {
        // The incident is in place before the target routes into it: the agent probes every 5 s,
        // and one frag-needed that gets through caches mtu 1200 in the root namespace for 10 min.
        await prepare(h);
        await gw.attach(h, 9000);
        await gw.routeTarget(target);
        const started = Date.now();
        mark(`${name}: incident in place, target ${target}`);
        // the agent's own check says blackhole: small probes answered, DF probes vanished
        const bad = await poll(
          `the agent's check of ${target} to report a blackhole`,
          async () => {
            const p = e.observations.latest()?.paths.find((x) => x.target === target);
            return p !== undefined && p.blackhole && Date.parse(p.measuredAt) >= started ? p : undefined;
          },
          OPEN_TIMEOUT_MS,
        ).catch((err: Error) => {
          const last = e.observations.latest()?.paths.find((x) => x.target === target);
          throw new Error(`${err.message}; the agent's latest check: ${JSON.stringify(last)}`);
        });
        mark(
          `${name}: agent path check ${JSON.stringify({ ...bad, evidence: bad.evidence.split("\n")[0] })}`,
        );
        expect(bad).toMatchObject({ reached: true, blackhole: true });
        const { opened, openS } = await c.findingOpens(
          `an open pmtu_blackhole finding for ${target}`,
          (f) => f.kind === "pmtu_blackhole" && f.subject.target === target,
          started,
        );
        expect(opened.subject).toMatchObject({ hostId: e.hostId, netns: null, port: null, target });
        expect(opened.severity).toBe("critical");

        await remedied(h);
        const fixed = Date.now();
        const good = await poll(
          `a check of ${target} without blackhole after the remedy`,
          async () => {
            const p = e.observations.latest()?.paths.find((x) => x.target === target);
            return p !== undefined && !p.blackhole && Date.parse(p.measuredAt) >= fixed ? p : undefined;
          },
          OPEN_TIMEOUT_MS,
        );
        mark(`${name}: after remedy ${JSON.stringify({ ...good, evidence: good.evidence.split("\n")[0] })}`);
        expect(good.reached).toBe(true);
        const resolved = await e.waitForResolved(opened.id, RESOLVE_TIMEOUT_MS);
        const resolveS = secondsBetween(fixed, Date.now());
        mark(`${name}: finding resolved ${resolveS} s after the remedy`);
        expectResolvedHistory(resolved);
        const others = (await e.openFindings()).filter(
          (f) =>
            f.subject.target === target ||
            (f.subject.netns?.name ?? "").startsWith(pmtuBlackhole.PMTU_PREFIX),
        );
        mark(
          `${name}: other open findings of the path: ${others.map((f) => `${f.kind} ${f.title}`).join("; ") || "none"}`,
        );
        expect(others.filter((f) => f.kind === "pmtu_blackhole")).toEqual([]);
        summary.push(`pmtu ${name}: open ${openS} s, resolved ${resolveS} s after remedy`);
        return good;
      } finally {
        await h.teardown();
      }
    };

    // 1: router ra drops its own ICMP frag-needed towards a 1200-byte link
    const good = await phase(
      "blackhole",
      PMTU_TARGET_BLACKHOLE,
      {},
      (h) => h.trigger(),
      (h) => h.remedy(),
    );
    expect(good.pmtu).toBe(1200);
    // 2: a 9000-byte path whose last link has 1500 at the server's end: big frames vanish there
    await phase(
      "mtu-mismatch",
      PMTU_TARGET_MISMATCH,
      { mismatch: true, innerMtu: 9000, serverLinkMtu: 9000 },
      async (h) => {
        await runInNamespace(h.namespaces.server.name, [
          "ip",
          "addr",
          "add",
          `${PMTU_TARGET_MISMATCH}/24`,
          "dev",
          "pm0",
        ]);
      },
      (h) => h.remedy(),
    );
    summary.push(`pmtu: test ${seconds()} s`);
  },
};
