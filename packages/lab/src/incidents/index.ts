/**
 * Kernel incident scenarios (packages/diagnostics/docs/kernel-signals.md), one module per incident of
 * the registry (@tide/contracts' KERNEL_INCIDENTS), each in its own `tide-inc-*` network namespaces:
 *
 *   const aq = await acceptQueue.setup({ somaxconn: 10 });   // namespaces, server process
 *   await aq.trigger({ count: 300 });                        // ListenOverflows rises in aq.namespaces.server
 *   await aq.remedy();                                       // somaxconn raised, listen() again
 *   await aq.teardown();
 *
 * cleanupStaleNamespaces() removes what a crashed run left (every tide-inc-* namespace and its
 * processes); every setup() does it for its own prefix first.
 */
import type { KernelIncidentSlug } from "@tide/contracts";
import * as acceptQueue from "./accept-queue";
import * as listenerCrowding from "./listener-crowding";
import * as pmtuBlackhole from "./pmtu-blackhole";
import * as portExhaustion from "./port-exhaustion";
import * as softirqStall from "./softirq-stall";
import * as synQueue from "./syn-queue";
import * as tcpCollapse from "./tcp-collapse";

export { acceptQueue, synQueue, pmtuBlackhole, portExhaustion, tcpCollapse, listenerCrowding, softirqStall };

/** What every incident module offers: its own namespaces, set up, and torn down again. */
interface IncidentScenario {
  setup(options?: never): Promise<{ teardown(): Promise<void> }>;
}

/**
 * The reproduction of each incident of the registry (@tide/contracts' KERNEL_INCIDENTS), by slug:
 * a registry entry without a scenario here does not type-check.
 */
export const incidentScenarios = {
  "accept-queue": acceptQueue,
  "syn-queue": synQueue,
  "pmtu-blackhole": pmtuBlackhole,
  "port-exhaustion": portExhaustion,
  "softirq-stall": softirqStall,
  "tcp-collapse": tcpCollapse,
  "listener-crowding": listenerCrowding,
} as const satisfies Record<KernelIncidentSlug, IncidentScenario>;
export {
  INCIDENT_PREFIX,
  cleanupStaleNamespaces,
  counterDelta,
  listenSockets,
  parseSsListen,
  readNetCounters,
  readNstat,
  type IncidentNamespace,
  type ListenSocket,
  type NamespaceRole,
} from "./namespace";
export { createPmtuGateway, PMTU_GATEWAY_NS, type PmtuGateway } from "./pmtu-gateway";
