import { env } from "./env";

/**
 * Fail at start-up, with a readable message, when the environment is incomplete; then, in the
 * Node.js server, publish the API handlers for `tide-console serve`'s direct path
 * (api-handlers.ts, server/api-direct.ts).
 */
export async function register(): Promise<void> {
  env();
  // Next replaces NEXT_RUNTIME at build time (its documented instrumentation check), so it is not
  // configuration and does not belong in env.ts.
  // eslint-disable-next-line no-restricted-properties
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { publishApiHandlers } = await import("./api-handlers");
    publishApiHandlers();
  }
}
