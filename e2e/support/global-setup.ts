/**
 * Playwright globalSetup: starts the stack (support/stack.ts) and hands tests its URL and the
 * admin credentials through the environment (workers are started afterwards and inherit it).
 * The returned function is Playwright's teardown for this setup; global-teardown.ts calls it too,
 * in case the runner only runs globalTeardown.
 */
import type { FullConfig } from "@playwright/test";
import { startStack, type Stack } from "./stack";

declare global {
  var __tideE2eStack: Stack | undefined;
}

export default async function globalSetup(_config: FullConfig): Promise<() => Promise<void>> {
  const stack = await startStack();
  globalThis.__tideE2eStack = stack;
  process.env.TIDE_E2E_BASE_URL = stack.baseURL;
  process.env.TIDE_E2E_EMAIL = stack.email;
  process.env.TIDE_E2E_PASSWORD = stack.password;
  return async () => {
    globalThis.__tideE2eStack = undefined;
    await stack.stop();
  };
}
