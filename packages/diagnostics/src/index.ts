export * from "./thresholds";
/** Thresholds only one rule uses, defined in its file. */
export { KERNEL_DEFAULT_SOMAXCONN } from "./rules/accept-queue";
export { SYN_FLOOD_COMPLETION_RATIO } from "./rules/syn-queue";
export { CONNECT_MIN_CALLS, CONNECT_EADDRNOTAVAIL_CRITICAL_PER_S } from "./rules/port-exhaustion";
export { TCP_RMEM_LARGE_BYTES, TCP_RMEM_SUGGESTED } from "./rules/tcp-collapse";
export { LISTENER_HASH_BY_ADDRESS_SINCE } from "./rules/listener-crowding";
export { ETHERNET_MTU } from "./rules/pmtu";
export { counterDelta, rates, windowRates, rollingWindows, perSecond, NamespaceWindowSums } from "./rates";
export type { Rates, CounterDelta, NamespaceRates, CpuRates, ConnectDelta, HostWindow } from "./rates";
export { histogramQuantile, histogramCount, bucketBounds, log2Bucket } from "./histogram";
export type { DiagnoseOptions } from "./evaluation";
export { diagnose, rules, ruleFor, ruleOfIncident } from "./diagnose";
export { resolve } from "./resolve";
export type { Resolution, ResolvedFinding, ResolvedReason } from "./resolve";
