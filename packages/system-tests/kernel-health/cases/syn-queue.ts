/** Incident 2 (syn-queue) end to end, one of the cases ../incidents.lab-test.ts runs. */
import { expect } from "vitest";
import { synQueue } from "@tide/lab/incidents";
import { countersAround, incidentCase } from "../incident-case";

export const incidentTest = incidentCase({
  title: "SYN queue full with cookies off: syn_flood_drops; cookies on and a larger backlog resolve it",
  setup: () => synQueue.setup({ backlog: 16, syncookies: 0 }),
  async run(c, h) {
    const { summary, mark, seconds } = c;
    const ns = h.namespaces.server.name;
    const since = await c.coveredSince(ns);
    const first = await countersAround(ns, () => h.trigger({ count: 300, durationMs: 2_000 }));
    const { result: burst, triggered } = first;
    const drops = first.delta("TCPReqQFullDrop");
    mark(`burst ${JSON.stringify(burst)}, TCPReqQFullDrop +${drops}`);
    expect(drops).toBeGreaterThan(60);

    // the raw signal in the agent's own observation of that namespace
    await c.agentSees(ns, "TcpExtTCPReqQFullDrop", since, drops);

    const { opened, openS } = await c.namespaceFindingOpens("syn_flood_drops", ns, triggered);
    expect(opened.subject.port).toBeNull();
    expect(["warn", "critical"]).toContain(opened.severity);
    expect(opened.evidence.find((x) => x.metric === "TcpExtTCPReqQFullDrop")?.value).toBeGreaterThan(1);
    expect(opened.evidence.find((x) => x.metric === "net.ipv4.tcp_syncookies")?.value).toBe(0);

    await h.remedy({ cookies: true, backlog: 1024 });
    const remedied = Date.now();
    // the same burst again must neither drop nor need cookies: the window goes quiet because
    // of the remedy, not only because the burst stopped
    const again = await countersAround(ns, () => h.trigger({ count: 300, durationMs: 2_000 }));
    mark(`remedy applied; burst again ${JSON.stringify(again.result)}`);
    expect(again.delta("TCPReqQFullDrop")).toBe(0);
    expect(again.delta("TCPReqQFullDoCookies")).toBe(0);

    const resolveS = await c.findingResolves(opened, remedied);
    summary.push(`syn-queue: open ${openS} s, resolved ${resolveS} s after remedy, test ${seconds()} s`);
  },
});
