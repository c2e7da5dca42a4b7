/** Helpers for tests and tools that need their own PostgreSQL (integration setup, e2e). */
export {
  startTempCluster,
  ensureCluster,
  stopCluster,
  clusterUrl,
  type TempCluster,
} from "./postgres-cluster";
export { migrate, seed, migrateAndSeed, migrationsMatchSchema, type SeedOptions } from "./migrations";
