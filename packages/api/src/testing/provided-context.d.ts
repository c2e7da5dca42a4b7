import "vitest";

declare module "vitest" {
  /** Provided by packages/devstack's integration global setup: a fresh, migrated database. */
  interface ProvidedContext {
    databaseUrl: string;
  }
}
