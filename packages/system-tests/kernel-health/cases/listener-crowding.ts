/** Incident 7 (listener-crowding) end to end, one of the cases ../incidents.lab-test.ts runs. */
import { expect } from "vitest";
import { listenerCrowding } from "@tide/lab/incidents";
import { LISTENER_CROWDING_WARN } from "@tide/diagnostics";
import { poll } from "../../harness/end-to-end-harness";
import { TEST_TIMEOUT_MS, incidentCase } from "../incident-case";

export const incidentTest = incidentCase({
  title: "16,000 listeners on :53: listener_crowding for the port; one wildcard listener resolves it",
  setup: () => listenerCrowding.setup({ port: 53 }),
  async run(c, h) {
    const { env: e, summary, mark, seconds } = c;
    const ns = h.namespaces.server.name;
    await h.trigger({ count: 16_000, lifetimeMs: TEST_TIMEOUT_MS });
    const triggered = Date.now();
    expect((await h.listenersByPort()).get(53)).toBe(16_000);
    mark("16,000 listeners up");
    const seen = await poll(
      "the agent to count the listeners",
      async () => {
        const s = e.observations.withNamespace(ns).at(-1);
        const p = s?.ns.listenPorts.find((x) => x.port === 53);
        return p !== undefined && p.sockets >= 16_000 ? p : undefined;
      },
      30_000,
    );
    mark(`agent saw ${seen.sockets} listeners on :53`);
    expect(seen.sockets).toBe(16_000);

    const { opened, openS } = await c.namespaceFindingOpens("listener_crowding", ns, triggered);
    expect(opened.subject.port).toBe(53);
    // the first evaluation may have caught the helper still binding: above the threshold is the point
    const sockets = opened.evidence.find((x) => x.metric === "ss.listen.sockets_per_port")?.value;
    expect(sockets).toBeGreaterThan(LISTENER_CROWDING_WARN);
    expect(sockets).toBeLessThanOrEqual(16_000);

    await h.remedy();
    const remedied = Date.now();
    expect((await h.listenersByPort()).get(53)).toBe(1);
    mark("remedy applied: one wildcard listener");
    const resolveS = await c.findingResolves(opened, remedied);
    summary.push(
      `listener-crowding: open ${openS} s, resolved ${resolveS} s after remedy, test ${seconds()} s`,
    );
  },
});
