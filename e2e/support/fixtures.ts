import { test as base, expect, type Page } from "@playwright/test";

function required(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(`${name} is not set: run through playwright.config.ts (its globalSetup sets it)`);
  return value;
}

export async function signIn(page: Page): Promise<void> {
  await page.goto("/sign-in");
  await page.getByTestId("sign-in-email").fill(required("TIDE_E2E_EMAIL"));
  await page.getByTestId("sign-in-password").fill(required("TIDE_E2E_PASSWORD"));
  await page.getByTestId("sign-in-submit").click();
  await expect(page.getByTestId("signed-in-role")).toBeVisible();
}

/** Opens the fleet page and follows the link of pool `name`; returns the pool id. */
export async function openPool(page: Page, name: string): Promise<string> {
  await page.goto("/");
  await page.getByTestId("pools-table").getByRole("link", { name, exact: true }).click();
  await expect(page.getByTestId("pool-name")).toHaveText(name);
  const id = /\/pools\/([^/?#]+)/.exec(page.url())?.[1];
  if (!id) throw new Error(`no pool id in ${page.url()}`);
  return id;
}

/** Tests run against the console that globalSetup started (its URL is only known then). */
export const test = base.extend({
  // Playwright reads fixture dependencies from the destructuring pattern; this one has none.
  // eslint-disable-next-line no-empty-pattern
  baseURL: async ({}, use) => {
    await use(required("TIDE_E2E_BASE_URL"));
  },
});

export { expect };
