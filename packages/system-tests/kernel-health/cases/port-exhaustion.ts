/** Incident 4 (port-exhaustion) end to end, one of the cases ../incidents.lab-test.ts runs. */
import { expectNamespaceSubject } from "../../harness/incident-assertions";
import { expect } from "vitest";
import { portExhaustion } from "@tide/lab/incidents";
import { poll } from "../../harness/end-to-end-harness";
import { inNamespace, incidentCase } from "../incident-case";

export const incidentTest = incidentCase({
  title: "connect() with half the port range held: connect_port_exhaustion; IP_LOCAL_PORT_RANGE windows",
  setup: () => portExhaustion.setup({ rangeLow: 50000, rangeHigh: 51999, window: 100 }),
  async run(c, h) {
    const { env: e, summary, mark, seconds } = c;
    const ns = h.namespaces.client.name;
    const since = await c.coveredSince(ns);
    const run = await h.trigger({ hold: 1000, measure: 3000, holdMs: 5_000 });
    const triggered = Date.now();
    mark(`trigger ${JSON.stringify(run)}`);
    expect(run.held_even).toBe(1000);
    expect(run.errors).toEqual({});

    const inode = e.observations.inodeOf(ns);
    // the raw signal: the connect_latency probe's entry for the helper in that namespace
    const entry = await poll(
      "the agent's connect_latency entry of the namespace",
      async () =>
        e.observations
          .latest()
          ?.probeResults.connectLatency.find((c) => c.netnsInode === inode && c.evenPorts >= 1000),
      15_000,
    );
    const calls = entry.latencyUs.reduce((a, b) => a + b, 0);
    mark(
      `agent saw ${entry.comm} pid ${entry.pid}: ${calls} connects, even ${entry.evenPorts}, odd ${entry.oddPorts}`,
    );
    expect(calls).toBeGreaterThanOrEqual(4000);
    expect(entry.oddPorts).toBeGreaterThanOrEqual(3000);
    expect(since).toBeLessThan(triggered);

    const { opened, openS } = await c.findingOpens(
      "an open connect_port_exhaustion finding",
      (f) =>
        f.kind === "connect_port_exhaustion" && inNamespace(ns)(f) && f.subject.process?.pid === entry.pid,
      triggered,
    );
    expectNamespaceSubject(e, opened, ns);
    expect(opened.subject.process).toEqual({ pid: entry.pid, comm: entry.comm });
    expect(opened.evidence.map((x) => x.metric)).toContain("probe.connect_latency.p99");

    await h.remedy();
    const remedied = Date.now();
    const windowed = await h.trigger({ hold: 1000, measure: 3000, holdMs: 5_000 });
    mark(`remedy applied; run again ${JSON.stringify(windowed)}`);
    expect(windowed.window).toBe(100);
    expect(windowed.errors).toEqual({});
    const resolveS = await c.findingResolves(opened, remedied);
    // The subject is the process, and each run is a new process: the first run's finding
    // resolves when its connects leave the window, whatever the remedy. Whether the windowed
    // run gets a finding of its own is what the remedy changes; printed (p99 is noise-prone).
    const later = (await e.openFindings()).filter(
      (f) => f.kind === "connect_port_exhaustion" && inNamespace(ns)(f),
    );
    mark(
      `open connect_port_exhaustion findings after the windowed run: ${
        later.map((f) => `${f.subject.process?.pid} ${f.severity} ${f.title}`).join("; ") || "none"
      }`,
    );
    summary.push(
      `port-exhaustion: open ${openS} s, resolved ${resolveS} s after remedy, ` +
        `windowed run findings ${later.length}, test ${seconds()} s`,
    );
  },
});
