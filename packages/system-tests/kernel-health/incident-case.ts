/**
 * What one kernel incident's end-to-end test is (cases/<slug>.ts exporting `incidentTest`, one file
 * per incident of the registry, @tide/contracts' KERNEL_INCIDENTS) and what it gets from
 * incidents.lab-test.ts, which runs every case concurrently against one console and one agent
 * (end-to-end-harness.ts).
 */
import type { KernelIncidentSlug } from "@tide/contracts";
import { counterDelta, readNetCounters } from "@tide/lab/incidents";
import { stopwatch, type EndToEnd, type FindingRecord } from "../harness/end-to-end-harness";
import {
  expectNamespaceSubject,
  expectResolvedHistory,
  secondsBetween,
} from "../harness/incident-assertions";

/** Seconds of samples of a new namespace before its burst (MIN_RATE_COVERAGE_S is 10). */
const COVERAGE_S = 12;
export const OPEN_TIMEOUT_MS = 90_000;
/** The 1-minute window has to forget the incident, plus evaluation and polling slack. */
export const RESOLVE_TIMEOUT_MS = 180_000;
export const TEST_TIMEOUT_MS = 480_000;

/** An incident set up in its own namespaces (@tide/lab/incidents). */
interface Incident {
  teardown(): Promise<void>;
}

export interface IncidentCase<H extends Incident = Incident> {
  /** The test's name: the incident, its finding, its remedy. */
  title: string;
  /**
   * Cases this one must not overlap (it waits for them to end, bounded): e.g. a NET_RX stall
   * would count another case's softirq work.
   */
  runsAfter?: readonly KernelIncidentSlug[];
  /** Agent configuration the case needs, merged into the shared agent's. */
  agent?: Record<string, unknown>;
  /** Before the agent starts (e.g. routes its checks need from the first one); returns the cleanup. */
  beforeAgent?(): Promise<() => Promise<void>>;
  /** Sets the incident up for run(), which gets it; it is torn down after, pass or fail. */
  setup?(): Promise<H>;
  run(context: IncidentContext, incident: H): Promise<void>;
}

/** A case, with the type of its incident inferred from setup(). */
export function incidentCase<H extends Incident>(c: IncidentCase<H>): IncidentCase<H> {
  return c;
}

/** A finding about this namespace. */
export const inNamespace = (ns: string) => (f: FindingRecord) => f.subject.netns?.name === ns;

/**
 * What a case's run() gets: the shared console and agent, its log, and the steps most cases take
 * (coverage before a trigger, the agent's raw signal, the finding opening and resolving).
 */
export class IncidentContext {
  /** "[slug] +12.3 s what" to the log. */
  readonly mark: (what: string) => void;
  /** Seconds since the case started. */
  readonly seconds: () => number;

  constructor(
    /** The console and agent every case shares. */
    readonly env: EndToEnd,
    /** Lines for the run's summary (times to open and to resolve: printed, never asserted). */
    readonly summary: string[],
    label: string,
  ) {
    ({ mark: this.mark, seconds: this.seconds } = stopwatch(label));
  }

  /**
   * Waits until the agent has sampled the namespace for COVERAGE_S (rates need it before a burst);
   * returns the time from which the agent's samples count as after it.
   */
  async coveredSince(namespace: string): Promise<number> {
    await this.env.waitForCoverage(namespace, COVERAGE_S, 60_000);
    return Date.now() - 1_500;
  }

  /** Waits for the agent's own samples of the namespace to show the counter's rise; prints it. */
  async agentSees(namespace: string, counter: string, since: number, atLeast: number): Promise<number> {
    const seen = await this.env.observations.waitForIncrease(namespace, counter, since, atLeast);
    this.mark(`agent saw ${counter} +${seen}`);
    return seen;
  }

  /** Waits for the case's finding to open; prints it with the seconds since `since`. */
  async findingOpens(
    what: string,
    match: (f: FindingRecord) => boolean,
    since: number,
  ): Promise<{ opened: FindingRecord; openS: string }> {
    const opened = await this.env.waitForFinding(what, match, OPEN_TIMEOUT_MS);
    const openS = secondsBetween(since, Date.now());
    this.mark(`finding ${opened.id} open (${opened.severity}) ${openS} s after the trigger: ${opened.title}`);
    return { opened, openS };
  }

  /** findingOpens for a finding of `kind` about the namespace, which names it as the agent saw it. */
  async namespaceFindingOpens(
    kind: string,
    namespace: string,
    since: number,
  ): Promise<{ opened: FindingRecord; openS: string }> {
    const found = await this.findingOpens(
      `an open ${kind} finding`,
      (f) => f.kind === kind && inNamespace(namespace)(f),
      since,
    );
    expectNamespaceSubject(this.env, found.opened, namespace);
    return found;
  }

  /** Waits for the finding to resolve after the remedy and checks its history; the seconds it took. */
  async findingResolves(opened: FindingRecord, remedied: number): Promise<string> {
    const resolved = await this.env.waitForResolved(opened.id, RESOLVE_TIMEOUT_MS);
    const resolveS = secondsBetween(remedied, Date.now());
    this.mark(`finding resolved ${resolveS} s after the remedy`);
    expectResolvedHistory(resolved);
    return resolveS;
  }
}

/** Runs the trigger between two readings of the namespace's counters; `delta` reads TcpExt. */
export async function countersAround<T>(
  namespace: string,
  trigger: () => Promise<T>,
): Promise<{ result: T; triggered: number; delta: (tcpExtCounter: string) => number }> {
  const before = await readNetCounters(namespace);
  const result = await trigger();
  const after = await readNetCounters(namespace);
  return { result, triggered: Date.now(), delta: (name) => counterDelta(before, after, "TcpExt", name) };
}
