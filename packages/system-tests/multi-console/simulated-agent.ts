/**
 * A simulated host for the multi-console test: the agent's real console link (ConsoleLink from
 * @tide/agent: hello, batches, buffering, failover between consoleUrls) fed with simulated
 * observations instead of the kernel's. Time runs faster than the wall clock: one sample per tick,
 * each dated one second after the one before, starting in the recent past (inside the console's
 * retention) so a run of a minute covers several evaluation windows.
 */
import type { Observation } from "@tide/contracts";
import { testHello } from "@tide/contracts/testing";
import { ConsoleLink } from "@tide/agent";
import { namespace, sample, WEB } from "@tide/diagnostics/fixtures";

/**
 * Accept queue drops per second of an overflowing host's web namespace: critical for diagnostics
 * (the accept-queue rule's thresholds; the finding evaluator's integration test uses the same).
 */
export const OVERFLOWS_PER_S = 10;

/** What the test decides for every simulated host at once. */
export interface FleetClock {
  /** Epoch ms of every host's first sample (t = 0). */
  readonly startMs: number;
  /** Whether the hosts that overflow do so now (the condition clears when this turns false). */
  overflowing: boolean;
}

/**
 * Sample t (dated startMs + t s) of a host with a root namespace and a web namespace whose
 * TcpExtListenOverflows total is `overflows` (it grows while the host overflows).
 */
export function simulatedObservation(
  hostname: string,
  t: number,
  startMs: number,
  overflows: number,
): Observation {
  const drops = { TcpExtListenOverflows: 5_000 + overflows, TcpExtListenDrops: 5_000 + overflows };
  return {
    ...sample(t, {
      hostId: hostname,
      namespaces: [namespace(t), namespace(t, { netns: WEB, counters: drops })],
      probes: [],
    }),
    sampledAt: new Date(startMs + t * 1000).toISOString(),
  };
}

export class SimulatedAgent {
  readonly link: ConsoleLink;
  /** sampledAt of every sample offered to the link, in order. */
  readonly offered: string[] = [];
  /** sampledAt of every sample the consoles accepted (the link's onDelivered), in order. */
  readonly delivered: string[] = [];
  readonly logs: string[] = [];
  /** The host's accept queue drops so far (the counter's growth since t = 0). */
  private dropped = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly sending = new Set<Promise<void>>();

  constructor(
    readonly hostname: string,
    token: string,
    readonly consoleUrls: readonly string[],
    /** Whether this host's listener overflows while the fleet clock says so. */
    readonly overflows: boolean,
    private readonly clock: FleetClock,
  ) {
    this.link = new ConsoleLink({
      consoleUrls,
      token,
      bufferCapacity: 10_000,
      hello: () => testHello(hostname),
      log: (line) => this.logs.push(line),
      onDesired: () => Promise.resolve(),
      onDelivered: (batch) => this.delivered.push(...batch.sampledAt),
    });
  }

  /** Offers one sample every `tickMs`, as the agent does every sampleIntervalMs. */
  start(tickMs: number): void {
    this.timer = setInterval(() => this.tick(), tickMs);
  }

  /** Stops sampling; resolves once every sample offered is delivered (or after `timeoutMs`). */
  async stop(tickMs: number, timeoutMs: number): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const deadline = Date.now() + timeoutMs;
    // The link only sends when it is offered a sample: go on sampling until the buffer is empty.
    for (;;) {
      await Promise.all([...this.sending]);
      if (this.link.buffer.size === 0) break;
      if (Date.now() > deadline) break;
      this.tick();
      await new Promise((r) => setTimeout(r, tickMs));
    }
    await this.link.close();
  }

  /** Stops at once, delivered or not (a test's teardown). */
  async abort(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.link.close();
  }

  private tick(): void {
    if (this.overflows && this.clock.overflowing) this.dropped += OVERFLOWS_PER_S;
    const o = simulatedObservation(this.hostname, this.offered.length, this.clock.startMs, this.dropped);
    this.offered.push(o.sampledAt);
    const p = this.link.offer(o, []);
    this.sending.add(p);
    void p.finally(() => this.sending.delete(p));
  }
}
