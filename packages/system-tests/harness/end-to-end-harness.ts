/**
 * Test support for the kernel-health end-to-end lab tests: the real console on a throwaway
 * PostgreSQL (@tide/lab/testing's startConsoleStack, the one the lab's console tests use) + a host
 * token + the real agent, in-process, with a given configuration. The tests poll the console's REST API for findings (evaluation may happen
 * in the ingest request or a moment later: nothing here depends on which) and read what the agent
 * itself observed through a spy on its console link. teardown() always runs every step.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Observation, ProbeResults, PmtuPathResult } from "@tide/contracts";
import { Agent, resolveConfig, type AgentConfig } from "@tide/agent";
import { REPO_ROOT, waitFor } from "@tide/devstack";
import { INCIDENT_PREFIX } from "@tide/lab/incidents";
import { everyStep, startConsoleStack, type ConsoleStack } from "@tide/lab/testing";

/** The probe loader the dataplane build produces (`make -C dataplane build/tide-probes`). */
export const PROBES_BINARY = path.join(REPO_ROOT, "dataplane/build/tide-probes");
/** The namespace sampler (`make -C dataplane build/tide-nsdiag`): the agent's production path. */
export const NSDIAG_BINARY = path.join(REPO_ROOT, "dataplane/build/tide-nsdiag");

export interface NetnsRef {
  inode: number;
  name: string | null;
  root: boolean;
}

/** A finding as GET /api/v1/findings returns it (the fields these tests read). */
export interface FindingRecord {
  id: string;
  kind: string;
  status: string;
  severity: string;
  title: string;
  subject: {
    hostId: string;
    netns: NetnsRef | null;
    port: number | null;
    process: { pid: number; comm: string } | null;
    cpu: number | null;
    target: string | null;
  };
  evidence: { metric: string; value: number }[];
  firstSeenAt: string;
  resolvedAt: string | null;
}

export interface FindingDetail extends FindingRecord {
  history: { type: string; at: string; detail: string }[];
}

/**
 * The system tests' wait: waitFor (@tide/devstack) every second. A probe that throws (a reset
 * keep-alive connection to the console, a console busy restarting a worker) is tried again; the
 * last error is part of the timeout message.
 */
export function poll<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  return waitFor(what, probe, { timeoutMs, intervalMs: 1000, retryErrors: true }) as Promise<T>;
}

/** "[label] +12.3 s what": figures for the log, never for assertions. */
export function stopwatch(label: string): { mark: (what: string) => void; seconds: () => number } {
  const t0 = Date.now();
  const seconds = () => (Date.now() - t0) / 1000;
  return { mark: (what) => console.log(`[${label}] +${seconds().toFixed(1)} s ${what}`), seconds };
}

/** What the agent sampled, trimmed to what the tests read (no listener lists: 16k sockets). */
export interface SeenSample {
  at: number;
  namespaces: {
    inode: number;
    name: string | null;
    counters: Record<string, number>;
    listenPorts: { port: number; sockets: number }[];
  }[];
  probes: Observation["probes"];
  probeResults: ProbeResults;
  paths: PmtuPathResult[];
}

/** The agent's own observations (a spy on its console link), newest last, bounded. */
export class ObservationLog {
  readonly samples: SeenSample[] = [];
  constructor(private readonly capacity = 900) {}

  add(o: Observation): void {
    this.samples.push({
      at: Date.parse(o.sampledAt),
      // the root namespace and this process's incident namespaces: other runs' namespaces are noise
      namespaces: o.namespaces
        .filter((n) => n.netns.root || (n.netns.name ?? "").startsWith(INCIDENT_PREFIX))
        .map((n) => ({
          inode: n.netns.inode,
          name: n.netns.name,
          counters: n.counters,
          listenPorts: n.listenPorts,
        })),
      probes: o.probes,
      probeResults: o.probeResults,
      paths: o.paths,
    });
    if (this.samples.length > this.capacity) this.samples.splice(0, this.samples.length - this.capacity);
  }

  /** Samples that contain the named namespace, since `sinceMs` (epoch ms). */
  withNamespace(name: string, sinceMs = 0): { at: number; ns: SeenSample["namespaces"][number] }[] {
    const out: { at: number; ns: SeenSample["namespaces"][number] }[] = [];
    for (const s of this.samples) {
      if (s.at < sinceMs) continue;
      const ns = s.namespaces.find((n) => n.name === name);
      if (ns !== undefined) out.push({ at: s.at, ns });
    }
    return out;
  }

  /** Seconds of samples the agent has of the namespace (first to last sample). */
  coverageSeconds(name: string): number {
    const seen = this.withNamespace(name);
    return seen.length < 2 ? 0 : (seen.at(-1)!.at - seen[0]!.at) / 1000;
  }

  /** Inode of the named namespace as the agent saw it, or undefined. */
  inodeOf(name: string): number | undefined {
    return this.withNamespace(name).at(-1)?.ns.inode;
  }

  /** Increase of one counter of the named namespace over the samples since `sinceMs`. */
  counterIncrease(name: string, counter: string, sinceMs: number): number {
    const seen = this.withNamespace(name, sinceMs);
    if (seen.length < 2) return 0;
    return (seen.at(-1)!.ns.counters[counter] ?? 0) - (seen[0]!.ns.counters[counter] ?? 0);
  }

  latest(): SeenSample | undefined {
    return this.samples.at(-1);
  }

  /**
   * Waits (15 s at most) until the agent's samples of the namespace since `sinceMs` show the
   * counter grown by at least `atLeast` (what the test measured itself); resolves with the increase.
   */
  waitForIncrease(name: string, counter: string, sinceMs: number, atLeast: number): Promise<number> {
    return poll(
      `the agent to see ${counter} +${atLeast} in ${name}`,
      async () => {
        const d = this.counterIncrease(name, counter, sinceMs);
        return d >= atLeast ? d : undefined;
      },
      15_000,
    );
  }
}

export interface EndToEndOptions {
  /** Host name (and host token) the agent reports as. */
  hostname: string;
  /** Agent configuration on top of the harness's (console, token, 1 s sampling, no /metrics). */
  agent?: Record<string, unknown>;
  /** Log prefix. */
  label?: string;
}

export interface EndToEnd {
  readonly hostId: string;
  readonly consoleUrl: string;
  readonly agent: Agent;
  readonly config: AgentConfig;
  readonly observations: ObservationLog;
  /** Every line the agent logged. */
  readonly logs: string[];
  readonly hostToken: string;
  delivered(): number;
  /** GET /api/v1<p> with an admin API token; throws unless 200. */
  get<T>(p: string): Promise<T>;
  /** Open (or acknowledged) findings of this host. */
  openFindings(): Promise<FindingRecord[]>;
  /** Polls until an open finding matches. */
  waitForFinding(
    what: string,
    match: (f: FindingRecord) => boolean,
    timeoutMs: number,
  ): Promise<FindingRecord>;
  /** Polls until the finding is resolved; returns it with its history. */
  waitForResolved(id: string, timeoutMs: number): Promise<FindingDetail>;
  /** Polls until the agent has sampled the namespace for `seconds` (rate coverage before a burst). */
  waitForCoverage(namespace: string, seconds: number, timeoutMs: number): Promise<void>;
  /** The console's output tail (for failure messages). */
  consoleOutput(): string;
  teardown(): Promise<void>;
}

/**
 * Starts PostgreSQL, the console, and the agent (with the console link spied on), and waits until
 * the console has accepted a dozen samples. On failure everything started so far is stopped.
 */
export async function startEndToEnd(o: EndToEndOptions): Promise<EndToEnd> {
  const { mark } = stopwatch(o.label ?? "e2e");
  let stack: ConsoleStack | undefined;
  let agent: Agent | undefined;
  const dir = mkdtempSync(path.join(tmpdir(), "tide-agent-e2e-"));
  const logs: string[] = [];
  const teardown = async () => {
    try {
      await everyStep([
        () => agent?.stop(),
        () => stack?.close(),
        () => rmSync(dir, { recursive: true, force: true }),
      ]);
    } finally {
      mark("console, database and agent stopped");
    }
  };
  try {
    stack = await startConsoleStack();
    const { api, url: consoleUrl } = stack;
    const hostToken = (await api.hostTokens.create({ hostname: o.hostname })).token;
    const apiToken = (await api.tokens.create({ name: "agent-e2e", scopes: [...stack.adminScopes] })).token;
    mark("console healthy");
    const get = async <T>(p: string): Promise<T> => {
      const res = await fetch(`${consoleUrl}/api/v1${p}`, {
        headers: { authorization: `Bearer ${apiToken}` },
        signal: AbortSignal.timeout(15_000),
      });
      if (res.status !== 200) throw new Error(`GET ${p}: HTTP ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    };

    const tokenFile = path.join(dir, "host-token");
    writeFileSync(tokenFile, `${hostToken}\n`, { mode: 0o600 });
    const config = resolveConfig([
      {
        consoleUrl,
        hostTokenFile: tokenFile,
        hostname: o.hostname,
        metricsListen: "",
        sampleIntervalMs: 1000,
        tableDir: path.join(dir, "tables"),
        spoolDir: path.join(dir, "spool"),
        nsdiagBinary: NSDIAG_BINARY,
      },
      o.agent ?? {},
    ]);
    let delivered = 0;
    const observations = new ObservationLog();
    const started = new Agent(config, (line) => logs.push(line), {
      onDelivered: (b) => (delivered += b.accepted),
    });
    agent = started;
    await started.start();
    const link = started.consoleLink;
    if (link === null) throw new Error("the agent has no console link");
    // The spy: every observation the agent hands to its link, as sampled.
    const offer = link.offer.bind(link);
    link.offer = (observation, dataPlane) => {
      observations.add(observation);
      return offer(observation, dataPlane);
    };
    // more than MIN_RATE_COVERAGE_S (10 s) of samples in the console before any incident
    await poll("12 delivered samples", async () => (delivered >= 12 ? true : undefined), 60_000);
    mark(`agent delivered ${delivered} samples`);

    const openFindings = () =>
      get<FindingRecord[]>(`/findings?hostId=${encodeURIComponent(o.hostname)}&status=open`);
    return {
      hostId: o.hostname,
      consoleUrl,
      agent: started,
      config,
      observations,
      logs,
      hostToken,
      delivered: () => delivered,
      get,
      openFindings,
      waitForFinding: (what, match, timeoutMs) =>
        poll(what, async () => (await openFindings()).find(match), timeoutMs),
      waitForResolved: (id, timeoutMs) =>
        poll(
          `finding ${id} to resolve`,
          async () => {
            const f = await get<FindingDetail>(`/findings/${id}`);
            return f.status === "resolved" ? f : undefined;
          },
          timeoutMs,
        ),
      waitForCoverage: (namespace, seconds, timeoutMs) =>
        poll(
          `${seconds} s of samples of ${namespace}`,
          async () => (observations.coverageSeconds(namespace) >= seconds ? true : undefined),
          timeoutMs,
        ).then(() => undefined),
      consoleOutput: () => stack?.output() ?? "",
      teardown,
    };
  } catch (e) {
    await teardown().catch(() => undefined);
    throw e;
  }
}
