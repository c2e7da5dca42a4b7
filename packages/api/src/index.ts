export { appRouter, type AppRouter } from "./routers/_app";
export { createCallerFactory } from "./trpc";
export { createContext, resolveActor, type Context } from "./context";
export { openApiDocument } from "./openapi";
export { checkDatabase, getDb } from "./db";
export { SESSION_COOKIE } from "./auth/sessions";
export { handleSignIn, handleSignOut } from "./http/sign-in";
export { handleTableDownload } from "./http/table-download";
export { tideErrorResponse } from "./http/errors";
export { hashPassword } from "./auth/secrets";
export type { Actor } from "./auth/actor";
export {
  hostLiveUpdate,
  listenForHostSamples,
  listenForPool,
  LIVE_COUNTERS,
  type HostLiveUpdate,
  type LiveCpu,
  type LiveListener,
  type LiveNamespace,
  type LivePoint,
} from "./live/host-live";
export { LIVE_RECHECK_MS, liveReaderRefusal, watchLiveReader, type LiveRefusal } from "./live/reader-access";
export { handleRestRequest, handleTrpcRequest } from "./http/routes";
export { historyRetentionDays } from "./services/telemetry/host-history.service";
