/** Playwright globalTeardown: stops the stack if the setup's own teardown has not already. */
export default async function globalTeardown(): Promise<void> {
  const stack = globalThis.__tideE2eStack;
  globalThis.__tideE2eStack = undefined;
  await stack?.stop();
}
