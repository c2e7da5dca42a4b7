export * from "./thresholds";
export { counterDelta, rates, windowRates, rollingWindows, perSecond } from "./rates";
export type { Rates, CounterDelta, NamespaceRates, CpuRates, ConnectDelta, HostWindow } from "./rates";
export { histogramQuantile, histogramCount, bucketBounds, log2Bucket } from "./histogram";
export type { DiagnoseOptions } from "./evaluation";
export { diagnose, rules, ruleFor, ruleOfIncident } from "./diagnose";
export { resolve } from "./resolve";
export type { Resolution, ResolvedFinding, ResolvedReason } from "./resolve";
