import type { Locator, Page } from "@playwright/test";
import { expect, openPool, signIn, test } from "../support/fixtures";

/** The proxy row of `hostname` on the pool page. */
const proxyRow = (page: Page, hostname: string): Locator =>
  page.locator(`[data-testid="proxy-row"][data-hostname="${hostname}"]`);

/**
 * Opens the preview of `action` on `hostname`, checks it is allowed and shows a diff, confirms with
 * `reason` and returns the new table version number. Leaves the dialog closed.
 */
async function applyAction(page: Page, hostname: string, action: string, reason: string): Promise<number> {
  await proxyRow(page, hostname).getByTestId(`action-${action}`).click();
  const dialog = page.getByTestId("preview-dialog");
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId("table-diff")).toBeVisible();
  await expect(dialog.getByTestId("preview-refusal")).toHaveCount(0);
  await dialog.getByTestId("transition-reason").fill(reason);
  await expect(dialog.getByTestId("confirm-transition")).toBeEnabled();
  await dialog.getByTestId("confirm-transition").click();
  const result = dialog.getByTestId("transition-result");
  await expect(result).toBeVisible();
  const version = Number(await result.getAttribute("data-version"));
  expect(version).toBeGreaterThan(1);
  await dialog.getByTestId("close-dialog").click();
  await expect(dialog).toBeHidden();
  return version;
}

test("drain a proxy, inspect version, diff and audit, then walk it back to active", async ({ page }) => {
  await signIn(page);
  const poolId = await openPool(page, "www");

  const rows = page.getByTestId("proxy-row");
  await expect(rows).toHaveCount(8);
  const active = page.locator('[data-testid="proxy-row"][data-state="active"]');
  await expect(active).toHaveCount(8);
  const hostname = (await active.first().getAttribute("data-hostname")) ?? "";
  const other = (await active.nth(1).getAttribute("data-hostname")) ?? "";
  expect(hostname).not.toBe("");
  expect(other).not.toBe("");
  const before = Number(await page.getByTestId("current-version").getAttribute("data-version"));
  const reason = `e2e drain ${Date.now()}`;

  let drainVersion = 0;
  await test.step("drain: preview shows moved rows and shares, confirm shows the new version", async () => {
    await proxyRow(page, hostname).getByTestId("action-drain").click();
    const dialog = page.getByTestId("preview-dialog");
    await expect(dialog).toBeVisible();
    await expect(dialog.getByTestId("preview-to").getByTestId("state-badge")).toHaveAttribute(
      "data-state",
      "draining",
    );
    const changed = dialog.getByTestId("rows-changed");
    await expect(changed).toBeVisible();
    expect(Number(await changed.getAttribute("data-value"))).toBeGreaterThan(0);
    await expect(dialog.getByTestId("share-row")).toHaveCount(8);
    // The drained proxy loses primary rows.
    const address = (await proxyRow(page, hostname).getAttribute("data-address")) ?? "";
    const share = dialog.locator(`[data-testid="share-row"][data-address="${address}"]`).getByRole("cell");
    const primaryBefore = Number(await share.nth(1).textContent());
    const primaryAfter = Number(await share.nth(2).textContent());
    expect(primaryBefore).toBeGreaterThan(0);
    expect(primaryAfter).toBeLessThan(primaryBefore);
    // The sample of changed rows sits in a collapsed <details>.
    await dialog.locator("summary", { hasText: "changed rows" }).click();
    await expect(dialog.getByTestId("changed-rows")).toBeVisible();
    await expect(dialog.getByTestId("preview-refusal")).toHaveCount(0);

    await dialog.getByTestId("transition-reason").fill(reason);
    await dialog.getByTestId("confirm-transition").click();
    const result = dialog.getByTestId("transition-result");
    await expect(result).toBeVisible();
    drainVersion = Number(await result.getAttribute("data-version"));
    expect(drainVersion).toBe(before + 1);
    await expect(result.getByTestId("new-version")).toHaveText(`v${drainVersion}`);
  });

  await test.step("the diff link opens the versions page on the new version", async () => {
    await page.getByTestId("new-version-diff-link").click();
    await expect(page).toHaveURL(new RegExp(`/pools/${poolId}/versions\\?to=`));
    await expect(page.locator(`[data-testid="version-row"][data-version="${drainVersion}"]`)).toBeVisible();
    const diff = page.getByTestId("version-diff");
    await expect(diff).toBeVisible();
    await expect(diff.getByTestId("diff-range")).toHaveAttribute("data-to", String(drainVersion));
    await expect(diff.getByTestId("table-diff")).toBeVisible();
  });

  await test.step("the audit log has the drain with its reason", async () => {
    await page.goto("/audit");
    const entry = page
      .locator('[data-testid="audit-row"][data-action="proxy.drain"]')
      .filter({ hasText: reason });
    await expect(entry).toHaveCount(1);
  });

  await test.step("with one proxy draining, draining another is refused before any click", async () => {
    await page.goto(`/pools/${poolId}`);
    await expect(proxyRow(page, hostname)).toHaveAttribute("data-state", "draining");
    const drainOther = proxyRow(page, other).getByTestId("action-drain");
    await expect(drainOther).toBeDisabled();
    await expect(drainOther).toHaveAttribute("title", /Another proxy of this pool is draining/);
    await expect(proxyRow(page, other).getByTestId("blocking-proxy")).toHaveText(hostname.split(".")[0]!);
    await expect(page.getByTestId("change-banner")).toContainText(hostname);
    await expect(proxyRow(page, other)).toHaveAttribute("data-state", "active");
  });

  await test.step("walk the proxy back: deactivate, fill, activate", async () => {
    let version = drainVersion;
    for (const [action, state] of [
      ["deactivate", "inactive"],
      ["fill", "filling"],
      ["activate", "active"],
    ] as const) {
      const next = await applyAction(page, hostname, action, `e2e ${action}`);
      expect(next).toBe(version + 1);
      version = next;
      await expect(proxyRow(page, hostname)).toHaveAttribute("data-state", state);
    }
    await expect(active).toHaveCount(8);
    await expect(page.getByTestId("current-version")).toHaveAttribute("data-version", String(version));
  });
});
