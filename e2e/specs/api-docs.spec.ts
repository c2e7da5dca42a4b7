import { expect, signIn, test } from "../support/fixtures";
import { watchConsoleErrors } from "../support/page-checks";

/**
 * The API docs are a page of the console (Swagger UI from its own copy, under its CSP), not raw
 * JSON: the operations of /api/openapi.json show by path and summary, and nothing is blocked or
 * failing in the browser console (a CSP violation is logged as an error).
 */
test("API docs render the operations, CSP-clean", async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page);
  const errors = watchConsoleErrors(page);
  const response = await page.goto("/docs");
  expect(response?.headers()["content-security-policy"]).toContain("script-src 'self' 'nonce-");
  const docs = page.getByTestId("api-docs");
  // Swagger UI draws the 3.0 form of the document (about 3 s of CPU; the 3.1 form took about 9 s,
  // 21–38 s on a busy 2-core machine): the expect timeout, with room for a busy machine.
  await expect(docs.locator(".opblock").first()).toBeVisible({ timeout: 15_000 });
  await expect(docs).toContainText("Audit log, newest first");
  await expect(docs).toContainText("/proxies/{proxyId}/drain");
  expect(await docs.locator(".opblock").count()).toBeGreaterThan(20);
  await expect(page.getByTestId("api-docs-error")).toHaveCount(0);
  expect(errors).toEqual([]);
});
