/** Incident 5 (softirq-stall) end to end, one of the cases ../incidents.lab-test.ts runs. */
import { expect } from "vitest";
import { softirqStall } from "@tide/lab/incidents";
import { poll } from "../../harness/end-to-end-harness";
import { incidentCase } from "../incident-case";

export const incidentTest = incidentCase({
  title:
    "NET_RX stalls on one CPU (a long nftables chain, RPS, a UDP flood): softirq_net_rx_stall for the CPU; deleting the chain resolves it",
  // Receive-queue collapsing runs inside NET_RX for milliseconds, which the stall finding would
  // count, and a SYN flood competes for the same CPUs.
  runsAfter: ["syn-queue", "tcp-collapse"],
  setup: () => softirqStall.setup({ rules: 20_000 }),
  async run(c, h) {
    const { env: e, summary, mark, seconds } = c;
    const probe = e.observations.latest()?.probes.find((p) => p.probe === "net_rx_softirq");
    expect(probe?.state).toBe("on");
    mark(`set up: ${h.rules} rules, NET_RX of CPU ${h.cpu}, flood from CPU ${h.senderCpu}`);
    const started = Date.now();
    const flood = await h.trigger({ durationMs: 4_000 });
    const triggered = Date.now();
    mark(`flood ${JSON.stringify(flood)}`);
    expect(flood.sent).toBeGreaterThan(0);
    // the raw signal: the agent's net_rx_softirq reading of that CPU during the flood
    const longest = await poll(
      `the agent to see a NET_RX run over 10 ms on CPU ${h.cpu}`,
      async () => {
        let max = 0;
        for (const s of e.observations.samples) {
          if (s.at < started) continue;
          for (const x of s.probeResults.netRxSoftirq)
            if (x.cpu === h.cpu) max = Math.max(max, x.intervalMaxUs);
        }
        return max > 10_000 ? max : undefined;
      },
      15_000,
    );
    mark(`agent saw a ${(longest / 1000).toFixed(1)} ms NET_RX run on CPU ${h.cpu}`);

    const { opened, openS } = await c.findingOpens(
      "an open softirq_net_rx_stall finding",
      (f) => f.kind === "softirq_net_rx_stall" && f.subject.cpu === h.cpu,
      triggered,
    );
    expect(opened.subject).toMatchObject({ hostId: e.hostId, netns: null, port: null, cpu: h.cpu });
    // Backlog drops can open the finding before the sample with the long run reaches the console;
    // the open finding is refreshed on the next evaluation and then names the run.
    const maxUs = (f: typeof opened) =>
      f.evidence.find((x) => x.metric === "probe.net_rx_softirq.max")?.value ?? 0;
    const refreshed = await e.waitForFinding(
      `finding ${opened.id} to show the NET_RX run over 10 ms`,
      (f) => f.id === opened.id && maxUs(f) > 10_000,
      20_000,
    );
    expect(maxUs(refreshed)).toBeGreaterThan(10_000);

    await h.remedy();
    const remedied = Date.now();
    expect(await h.slowRules()).toBe(0);
    // the same flood again: without the chain the runs stay short, so the window goes quiet
    // because of the remedy (the finding cannot resolve while a run over 10 ms is in it)
    const again = await h.trigger({ durationMs: 4_000 });
    mark(`remedy applied (chain deleted); flood again ${JSON.stringify(again)}`);
    const resolveS = await c.findingResolves(opened, remedied);
    summary.push(`softirq-stall: open ${openS} s, resolved ${resolveS} s after remedy, test ${seconds()} s`);
  },
});
