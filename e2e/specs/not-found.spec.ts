import { expect, signIn, test } from "../support/fixtures";

/**
 * An unknown id says so at once, in plain words, with a way back: the server's 404 is an answer, not
 * a failure to retry (the console used to retry it for seconds), and no raw error code is shown.
 */
test("an unknown pool says it does not exist at once, in plain words, with a way back", async ({ page }) => {
  await signIn(page);
  const asked: string[] = [];
  page.on("request", (r) => {
    if (r.url().includes("pools.get")) asked.push(r.url());
  });
  await page.goto("/pools/pool_nosuchpool00000");
  const notice = page.getByTestId("error");
  await expect(notice).toHaveAttribute("data-code", "not_found");
  await expect(notice).toContainText("does not exist");
  await expect(notice).not.toContainText("not_found");
  // Retries would come within a few seconds: there are none.
  await page.waitForTimeout(2_500);
  expect(asked).toHaveLength(1);
  await notice.getByTestId("error-back").click();
  await expect(page).toHaveURL(/\/$/);
});

test("an unknown address shows the app header and runs no blocked script", async ({ page }) => {
  await signIn(page);
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  const res = await page.goto("/no/such/page");
  expect(res?.status()).toBe(404);
  await expect(page.getByTestId("not-found")).toBeVisible();
  await expect(page.getByRole("navigation", { name: "Main" })).toBeVisible();
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Directors" }).click();
  await expect(page).toHaveURL(/\/directors$/);
  expect(errors.filter((e) => /Content Security Policy|Refused to/i.test(e))).toEqual([]);
});

test("the sign-in page has its icon before anyone signs in", async ({ browser, baseURL }) => {
  const context = await browser.newContext({ baseURL });
  try {
    const page = await context.newPage();
    await page.goto("/sign-in");
    const href = await page.locator('link[rel="icon"]').first().getAttribute("href");
    expect(href).toBeTruthy();
    const icon = await page.request.get(href!, { maxRedirects: 0 });
    expect(icon.status()).toBe(200);
    expect(icon.headers()["content-type"]).toContain("image/svg+xml");
  } finally {
    await context.close();
  }
});
