import {
  OBSERVATION_SCHEMA_VERSION,
  type Observation,
  type PmtuPathResult,
  type ProbeAvailability,
  type ProbeResults,
} from "@tide/contracts";
import type { HostSample } from "./namespace-sampler";

/**
 * Sample times strictly increase (a batch requires it): a clock that did not move, or moved back,
 * gets one millisecond after the previous sample.
 */
export class MonotonicClock {
  private last = 0;
  constructor(private readonly now: () => number = Date.now) {}
  next(): string {
    const t = Math.max(this.now(), this.last + 1);
    this.last = t;
    return new Date(t).toISOString();
  }
}

/** "inode:port" of every open listener of the sample (to keep only live capped listeners). */
export function openListenerKeys(sample: HostSample): Set<string> {
  const keys = new Set<string>();
  for (const ns of sample.namespaces) for (const l of ns.listeners) keys.add(`${ns.netns.inode}:${l.port}`);
  return keys;
}

/** Fill requestedBacklog of listeners the listen probe saw (it knows the backlog passed to listen()). */
export function withRequestedBacklogs(sample: HostSample, results: ProbeResults): HostSample {
  if (results.listenCapped.length === 0) return sample;
  const requested = new Map(results.listenCapped.map((c) => [`${c.netnsInode}:${c.port}`, c.requested]));
  return {
    ...sample,
    namespaces: sample.namespaces.map((ns) => ({
      ...ns,
      listeners: ns.listeners.map((l) => ({
        ...l,
        requestedBacklog: requested.get(`${ns.netns.inode}:${l.port}`) ?? l.requestedBacklog,
      })),
    })),
  };
}

export function buildObservation(input: {
  hostId: string;
  agentVersion: string;
  kernelRelease: string | null;
  sampledAt: string;
  sample: HostSample;
  probes: ProbeAvailability[];
  probeResults: ProbeResults;
  paths?: PmtuPathResult[];
}): Observation {
  const sample = withRequestedBacklogs(input.sample, input.probeResults);
  return {
    schemaVersion: OBSERVATION_SCHEMA_VERSION,
    hostId: input.hostId,
    agentVersion: input.agentVersion,
    kernelRelease: input.kernelRelease,
    sampledAt: input.sampledAt,
    namespaces: sample.namespaces,
    cpus: sample.cpus,
    probes: input.probes,
    probeResults: input.probeResults,
    paths: input.paths ?? [],
  };
}
