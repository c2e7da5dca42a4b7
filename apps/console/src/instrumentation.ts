import { env } from "./env";

/** Fail at start-up, with a readable message, when the environment is incomplete. */
export function register(): void {
  env();
}
