import { expect, openPool, signIn, test } from "../support/fixtures";
import { checkPage, WIDTHS, watchConsoleErrors } from "../support/page-checks";

/**
 * The forwarding table's view lives in its URL: the selected row, the proxy filter and the explained
 * flow survive a reload. A filter applied after a jump starts at the top of its rows, stale answers
 * clear when their inputs change, explain refuses a destination that is not a bind, and the
 * versions page names versions by number like the table page. Reads only the seeded pool "www".
 */
test("table view state round-trips through the URL; stale answers clear", async ({ page }) => {
  test.setTimeout(90_000);
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page);
  const poolId = await openPool(page, "www");
  await page.goto(`/pools/${poolId}/table`);
  const list = page.getByTestId("table-rows");
  await expect(list).toHaveAttribute("data-count", "65536");

  await test.step("a jump selects a row and puts it in the URL", async () => {
    await page.getByTestId("jump-row").fill("0xbb44");
    await page.getByTestId("jump-row").press("Enter");
    await expect(page.locator(`[data-testid="table-row"][data-row="${0xbb44}"]`)).toBeVisible();
    await expect(page).toHaveURL(/row=0xbb44/);
  });

  await test.step("a filter after the jump starts at the top of its rows", async () => {
    await page.getByTestId("filter-proxy").selectOption({ index: 1 });
    await expect(page).toHaveURL(/proxy=prx_/);
    const count = Number((await list.getAttribute("data-count")) ?? "0");
    expect(count).toBeLessThan(65536);
    await expect.poll(() => list.evaluate((el) => el.scrollTop)).toBe(0);
    const rows = page.getByTestId("table-row");
    await expect(rows.first()).toBeVisible();
    const first = Number(await rows.first().getAttribute("data-row"));
    expect(first).toBeLessThan(0xbb44);
  });

  let explainedRow = "";
  await test.step("an explained flow goes into the URL", async () => {
    await page.getByTestId("explain-src").fill("198.51.100.7:45678");
    await page.getByTestId("explain-submit").click();
    const result = page.getByTestId("explain-result");
    await expect(result).toBeVisible();
    explainedRow = (await result.getAttribute("data-row")) ?? "";
    await expect(page).toHaveURL(/src=198\.51\.100\.7%3A45678/);
    // The explained row was outside the filter, so explain showed all rows; filter again.
    await page.getByTestId("filter-proxy").selectOption({ index: 2 });
    await expect(page).toHaveURL(/proxy=prx_.*src=/);
  });

  await test.step("a reload restores the row, the filter and the flow", async () => {
    const url = page.url();
    const filterValue = await page.getByTestId("filter-proxy").inputValue();
    const matches = await page.getByTestId("filter-matches").textContent();
    await page.reload();
    expect(page.url()).toBe(url);
    await expect(page.getByTestId("filter-proxy")).toHaveValue(filterValue);
    await expect(page.getByTestId("filter-matches")).toHaveText(matches ?? "");
    await expect(page.getByTestId("explain-src")).toHaveValue("198.51.100.7:45678");
    await expect(page.getByTestId("explain-result")).toHaveAttribute("data-row", explainedRow);
    expect(new URL(url).searchParams.get("row")).toBe(
      `0x${Number(explainedRow).toString(16).padStart(4, "0")}`,
    );
  });

  await test.step("a link to a row opens scrolled to it, selected", async () => {
    await page.goto(`/pools/${poolId}/table?row=0xbb44`);
    const row = page.locator(`[data-testid="table-row"][data-row="${0xbb44}"]`);
    await expect(row).toBeVisible();
    await expect(row).toHaveAttribute("aria-current", "true");
  });

  await test.step("editing the flow clears the old answer and its URL", async () => {
    await page.getByTestId("explain-src").fill("198.51.100.7:45678");
    await page.getByTestId("explain-submit").click();
    await expect(page.getByTestId("explain-result")).toBeVisible();
    await expect(page).toHaveURL(/src=/);
    await page.getByTestId("explain-src").fill("198.51.100.8");
    await expect(page.getByTestId("explain-result")).toHaveCount(0);
    await expect(page).not.toHaveURL(/src=/);
  });

  await test.step("a destination that is not a bind is refused in words; editing clears it", async () => {
    await page.getByTestId("explain-dst").fill("192.0.2.250:443");
    await page.getByTestId("explain-submit").click();
    const error = page.getByTestId("explain-error");
    await expect(error).toContainText("192.0.2.250:443 is not a bind of pool www");
    await expect(error).not.toContainText("bad_request");
    await page.getByTestId("explain-dst").fill("");
    await expect(error).toHaveCount(0);
  });

  await test.step("a bad row number says why, and the message goes when the text changes", async () => {
    await page.getByTestId("jump-row").fill("0x1zzzz");
    await page.getByTestId("jump-row").press("Enter");
    await expect(page.getByRole("alert").filter({ hasText: "is not a row" })).toBeVisible();
    await page.getByTestId("jump-row").fill("12");
    await expect(page.getByRole("alert").filter({ hasText: "is not a row" })).toHaveCount(0);
  });
});

test("versions page names versions by number, like the table page", async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page);
  // A pool of its own with two versions: created, then one proxy drained.
  const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
  const net = `198.19.${Math.floor(Math.random() * 256)}`;
  const post = async (url: string, data: unknown) => {
    const res = await page.request.post(url, { data });
    expect(res.status(), `POST ${url}: ${await res.text()}`).toBeLessThan(300);
    return (await res.json()) as { id: string };
  };
  const pool = await post("/api/v1/pools", {
    name: `e2e-versions-${run}`,
    binds: [{ address: `${net}.10`, proto: "tcp", portStart: 443 }],
  });
  const proxy = await post(`/api/v1/pools/${pool.id}/proxies`, {
    address: `${net}.21`,
    hostname: `e2e-v-1-${run}`,
  });
  for (const i of [2, 3])
    await post(`/api/v1/pools/${pool.id}/proxies`, {
      address: `${net}.2${i}`,
      hostname: `e2e-v-${i}-${run}`,
    });
  await post(`/api/v1/proxies/${proxy.id}/drain`, { reason: "two versions" });

  await page.goto(`/pools/${pool.id}/versions`);
  const rows = page.getByTestId("version-row");
  const newest = Number(await rows.first().getAttribute("data-version"));
  expect(newest).toBeGreaterThan(1);
  // Picking a version (a click on its row) writes its number, not its id.
  await page.locator(`[data-testid="version-row"][data-version="1"]`).getByRole("cell").nth(4).click();
  await expect(page).toHaveURL(/\?to=1$/);
  await expect(
    page.locator(`[data-testid="version-row"][data-version="1"]`).getByTestId("diff-to"),
  ).toBeChecked();

  await page.goto(`/pools/${pool.id}/versions?from=1&to=2`);
  await expect(page.getByTestId("diff-range")).toHaveText("v1 → v2");
  await page.goto(`/pools/${pool.id}/versions?to=999`);
  await expect(page.getByTestId("versions-missing")).toHaveText(
    "This pool has no version 999; showing the newest instead.",
  );
  await page
    .locator(`[data-testid="version-row"][data-version="${newest}"]`)
    .getByRole("link", { name: "table" })
    .click();
  await expect(page).toHaveURL(new RegExp(`/table\\?version=${newest}$`));
});

for (const size of WIDTHS) {
  test(`table and versions pages at ${size.name} px`, async ({ page }, testInfo) => {
    await page.setViewportSize({ width: size.width, height: size.height });
    await signIn(page);
    const poolId = await openPool(page, "www");
    const errors = watchConsoleErrors(page);
    await page.goto(`/pools/${poolId}/table?row=0x0010`);
    const first = page.locator('[data-testid="table-row"][data-row="16"]');
    await expect(first).toBeVisible();
    // Host names stay distinguishable: at 390 px the common part goes, not the end.
    const part = first.getByTestId("host-part").first();
    if (size.width < 600) {
      await expect(part).toBeVisible();
      await expect(part).toHaveText(/^…\d+$/);
    } else {
      await expect(part).toBeHidden();
      await expect(first).toContainText(/proxy-www-\d+\.dc1\.example\.net/);
    }
    await checkPage(page, testInfo, "table", errors);
    await page.goto(`/pools/${poolId}/versions`);
    await expect(page.getByTestId("version-row").first()).toBeVisible();
    await checkPage(page, testInfo, "versions", errors);
  });
}
