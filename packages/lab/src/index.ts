/**
 * @tide/lab: lab topologies of network namespaces running the real data plane.
 *
 *   const lab = await up();                       // the "glb" topology, all proxies active
 *   const driver = await lab.clientDriver();
 *   await driver.open(20);                        // 20 streams through the VIP
 *   await lab.pushTable({ prx1: "draining" });    // every director, hash checked
 *   summarizeConnections(await driver.close());
 *   await lab.down();
 */
export { up, down, attach, type LabOptions, type DownOptions } from "./lab-lifecycle";
export { Lab, DEFAULT_IDLE_SLEEP_US, TEST_SERVER_SCRIPT, type PushTableResult } from "./lab";
export type { LabStatus, DirectorStatusSummary, ProxyStatusSummary } from "./lab-status";
export * from "./topology";
export * from "./errors";
export {
  buildLabTable,
  labBinds,
  labTableSpec,
  LAB_HASH_FIELDS,
  LAB_HASH_KEY,
  LAB_POOL,
  LAB_SEED,
} from "./lab-table";
export type { LabTable, ProxyHealth, ProxyStates } from "./lab-table";
export { DirectorControl } from "./director-control";
export {
  RedirectControl,
  REDIRECT_COUNTER_NAMES,
  parseRedirectCounters,
  type RedirectCounters,
  type RedirectCounterName,
} from "./redirect-control";
export {
  ClientDriver,
  ConnectionReport,
  ConnectionState,
  HttpResult,
  summarizeConnections,
  type CloseOptions,
  type ConnectionSummary,
  type OpenOptions,
} from "./client-driver";
export { parseNetCounters, diffNetCounters, type NetCounters } from "./net-counters";
export { LabStateFile, labPaths, type LabPaths } from "./lab-files";
export { listNamespaces, runInNamespace, type CommandResult, type RunOptions } from "./host-command";
export { stopProcess } from "./lab-process";
export { CONSOLE_POOL_NAME, labHosts, type LabHost } from "./console/fleet.plan";
/** The kernel incidents, also as their own entry point: `@tide/lab/incidents`. */
export * as incidents from "./incidents";
