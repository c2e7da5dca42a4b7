/** Incident 6 (tcp-collapse) end to end, one of the cases ../incidents.lab-test.ts runs. */
import { expect } from "vitest";
import { tcpCollapse } from "@tide/lab/incidents";
import { countersAround, incidentCase } from "../incident-case";

export const incidentTest = incidentCase({
  title:
    "a slow reader of 1-byte segments with a 32 MiB tcp_rmem: tcp_collapse; a smaller tcp_rmem resolves it",
  setup: () => tcpCollapse.setup(),
  async run(c, h) {
    const { summary, mark, seconds } = c;
    const ns = h.namespaces.server.name;
    const since = await c.coveredSince(ns);
    const load = await countersAround(ns, () =>
      h.trigger({ durationMs: 4_000, writeSize: 1, connections: 4 }),
    );
    const { result: sent, triggered } = load;
    const prunes = load.delta("PruneCalled");
    const collapsed = load.delta("TCPRcvCollapsed");
    mark(`trigger ${JSON.stringify(sent)}, PruneCalled +${prunes}, TCPRcvCollapsed +${collapsed}`);
    expect(prunes).toBeGreaterThan(100);

    await c.agentSees(ns, "TcpExtPruneCalled", since, prunes);

    const { opened, openS } = await c.namespaceFindingOpens("tcp_collapse", ns, triggered);
    expect(opened.evidence.find((x) => x.metric === "net.ipv4.tcp_rmem.max")?.value).toBe(33554432);

    await h.remedy();
    const remedied = Date.now();
    expect(await h.rmem()).toBe("4096 131072 1048576");
    // No second load: with the smaller buffer prunes get rarer but collapsing goes on (see
    // packages/lab's tcp-collapse.ts), so the window goes quiet because the load stopped.
    mark("remedy applied: tcp_rmem max 1 MiB");
    const resolveS = await c.findingResolves(opened, remedied);
    summary.push(`tcp-collapse: open ${openS} s, resolved ${resolveS} s after remedy, test ${seconds()} s`);
  },
});
