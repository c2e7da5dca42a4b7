export { createDb, pgPoolOf, sqlTransaction, type Db, type SqlClient, type SqlQuery } from "./client";
export * from "./selects";
export {
  Prisma,
  type ProxyState,
  type Role,
  type ActorKind,
  type AuditOutcome,
  type FindingSeverity,
  type FindingStatus,
  type FindingEventType,
} from "@prisma/client";
export * from "./repositories/host-tokens";
export * from "./repositories/enrollment-tokens";
export * from "./repositories/observation-samples";
export * from "./repositories/observation-chunks";
export * from "./repositories/observation-codec";
export * from "./repositories/observation-rollup";
export * from "./repositories/observation-history";
export * from "./repositories/observation-rollup-columns";
export * from "./repositories/findings";
export * from "./repositories/host-traffic";
export * from "./repositories/redirect-flows";
export * from "./repositories/pool-summaries";
export * from "./repositories/director-sync";
export * from "./repositories/change-reports";
