/**
 * @tide/devstack: what tests, the lab and benches need to stand up Tide around them: their own
 * PostgreSQL, the real console, and one way to wait for a condition.
 */
export { ensureCluster, stopCluster, clusterUrl } from "./postgres/dev-cluster";
export { startTempCluster, type TempCluster } from "./postgres/temp-cluster";
export { freePort } from "./postgres/ports";
export { REPO_ROOT } from "./repo-root";
export { migrate, seed, migrateAndSeed, migrationsMatchSchema, type SeedOptions } from "./migrations";
export {
  CONSOLE_DIR,
  loadApiFixtures,
  startConsole,
  stopConsole,
  type ApiFixtures,
  type ConsoleProcess,
} from "./console-process";
export { waitFor, sleep, DEFAULT_WAIT_INTERVAL_MS, type WaitOptions } from "./wait";
