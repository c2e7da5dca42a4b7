/**
 * Kernel incident scenarios (packages/diagnostics/docs/kernel-signals.md), one module per incident, each
 * in its own `tide-inc-*` network namespaces:
 *
 *   const aq = await acceptQueue.setup({ somaxconn: 10 });   // namespaces, server process
 *   await aq.trigger({ count: 300 });                        // ListenOverflows rises in aq.namespaces.server
 *   await aq.remedy();                                       // somaxconn raised, listen() again
 *   await aq.teardown();
 *
 * cleanupStaleNamespaces() removes what a crashed run left (every tide-inc-* namespace and its
 * processes); every setup() does it for its own prefix first.
 */
export * as acceptQueue from "./accept-queue";
export * as synQueue from "./syn-queue";
export * as pmtuBlackhole from "./pmtu-blackhole";
export * as portExhaustion from "./port-exhaustion";
export * as tcpCollapse from "./tcp-collapse";
export * as listenerCrowding from "./listener-crowding";
export * as softirqStall from "./softirq-stall";
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
