import { expect, openPool, signIn, test } from "../support/fixtures";

test("forwarding table: rows, jump to a row, explain a flow, filter by proxy", async ({ page }) => {
  await signIn(page);
  const poolId = await openPool(page, "www");
  await page.goto(`/pools/${poolId}/table`);

  const list = page.getByTestId("table-rows");
  await expect(list).toHaveAttribute("data-count", "65536");
  const rows = page.getByTestId("table-row");
  await expect(rows.first()).toBeVisible();
  await expect(page.locator('[data-testid="table-row"][data-row="0"]')).toBeVisible();

  await test.step("jump to 0xbb44", async () => {
    await page.getByTestId("jump-row").fill("0xbb44");
    await page.getByTestId("jump-row").press("Enter");
    const row = page.locator(`[data-testid="table-row"][data-row="${0xbb44}"]`);
    await expect(row).toBeVisible();
    await expect(row).toContainText("0xbb44");
  });

  await test.step("explain a flow shows its row", async () => {
    await page.getByTestId("explain-src").fill("198.51.100.7:45678");
    await page.getByTestId("explain-submit").click();
    const result = page.getByTestId("explain-result");
    await expect(result).toBeVisible();
    const row = await result.getAttribute("data-row");
    expect(Number(row)).toBeGreaterThanOrEqual(0);
    expect(Number(row)).toBeLessThan(65536);
    await expect(result.getByTestId("explain-primary")).toContainText("www-");
    await expect(page.locator(`[data-testid="table-row"][data-row="${row}"]`)).toBeVisible();
  });

  await test.step("filter by a proxy", async () => {
    const filter = page.getByTestId("filter-proxy");
    await filter.selectOption({ index: 1 });
    const label = (await filter.locator("option:checked").textContent()) ?? "";
    const hostname = label.trim().split(" ")[0] ?? "";
    expect(hostname).toMatch(/www-/);
    const matches = page.getByTestId("filter-matches");
    await expect(matches).toBeVisible();
    const count = Number(((await matches.textContent()) ?? "").replace(/[^0-9]/g, ""));
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThan(65536);
    await expect(list).toHaveAttribute("data-count", String(count));
    await expect(rows.first()).toBeVisible();
    await expect(rows.first()).toContainText(hostname);
  });
});
