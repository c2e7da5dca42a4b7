import type { APIRequestContext, Locator, Page } from "@playwright/test";
import { expect, signIn, test } from "../support/fixtures";
import { checkPage, watchConsoleErrors, WIDTHS } from "../support/page-checks";

/**
 * The pool page as an operator meets it: a change in progress is a banner with its actions, other
 * proxies' Drain is disabled before any click and names the proxy it waits for, an abort drain
 * from the banner, a preview that goes stale while open, and the page at phone and laptop widths.
 * Every test makes its own pool (4 proxies, then its own director: the one-at-a-time rule applies
 * only to a pool a director serves) under a name unique to this run.
 */
const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
let pools = 0;

interface MadePool {
  id: string;
  proxies: { id: string; hostname: string }[];
  net: string;
}

async function call(api: APIRequestContext, method: "post" | "put", url: string, data: unknown) {
  const res = await api[method](url, { data });
  expect(res.status(), `${method.toUpperCase()} ${url}: ${await res.text()}`).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
}

async function makePool(page: Page): Promise<MadePool> {
  const n = ++pools;
  const net = `198.19.${Math.floor(Math.random() * 200) + n}`;
  const api = page.request;
  const pool = (await call(api, "post", "/api/v1/pools", {
    name: `e2e-page-${run}-${n}`,
    binds: [{ address: `${net}.10`, proto: "tcp", portStart: 443 }],
  })) as { id: string };
  for (let i = 1; i <= 4; i++)
    await call(api, "post", `/api/v1/pools/${pool.id}/proxies`, {
      address: `${net}.${20 + i}`,
      hostname: `proxy-page-${n}-0${i}.${run}.example.net`,
    });
  const director = (await call(api, "post", "/api/v1/directors", {
    hostname: `director-page-${n}.${run}.example.net`,
  })) as { id: string };
  await call(api, "put", `/api/v1/directors/${director.id}/pools/${pool.id}`, {});
  const detail = (await (await api.get(`/api/v1/pools/${pool.id}`)).json()) as MadePool;
  return { id: pool.id, proxies: detail.proxies, net };
}

const proxyRow = (page: Page, hostname: string): Locator =>
  page.locator(`[data-testid="proxy-row"][data-hostname="${hostname}"]`);

test("a change in progress: the banner, Drain refused before any click, abort drain from the banner", async ({
  page,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page);
  const pool = await makePool(page);
  const [first, second] = [pool.proxies[0]!, pool.proxies[1]!];
  await call(page.request, "post", `/api/v1/proxies/${first.id}/drain`, { reason: "e2e kernel upgrade" });

  await page.goto(`/pools/${pool.id}`);
  const banner = page.getByTestId("change-banner");
  await expect(banner).toBeVisible();
  await expect(banner.getByTestId("change-proxy")).toHaveText(first.hostname);
  await expect(banner).toHaveAttribute("data-state", "draining");
  await expect(banner.getByTestId("change-duration")).toHaveText(/^ for \d+ s$/);
  await expect(banner.getByTestId("banner-deactivate")).toHaveText("Deactivate");
  await expect(banner.getByTestId("banner-abort")).toHaveText("Abort drain");

  await test.step("another proxy's Drain is disabled, says why and links the proxy it waits for", async () => {
    const row = proxyRow(page, second.hostname);
    const drain = row.getByTestId("action-drain");
    await expect(drain).toBeDisabled();
    await expect(drain).toHaveAttribute(
      "title",
      new RegExp(`Another proxy of this pool is draining: .*${first.hostname}`),
    );
    await expect(row.getByTestId("action-refusal")).toHaveText(`waits for ${first.hostname.split(".")[0]}`);
    await row.getByTestId("blocking-proxy").click();
    await expect(proxyRow(page, first.hostname)).toHaveAttribute("aria-selected", "true");
    await expect(page.getByTestId("preview-dialog")).toHaveCount(0);
  });

  await test.step("Abort drain from the banner: previewed, confirmed, the proxy is active again", async () => {
    await banner.getByTestId("banner-abort").click();
    const dialog = page.getByTestId("preview-dialog");
    await expect(dialog.getByRole("heading")).toHaveText(`Abort drain ${first.hostname}`);
    await expect(dialog.getByTestId("preview-summary")).toHaveText(
      /^proxy-page-\d+-01 takes new flows again on its [\d,]+ rows; flows that began during the drain still reach their proxy as secondary\.$/,
    );
    // An abort needs no reason: Confirm is enabled at once.
    await expect(dialog.getByTestId("confirm-transition")).toBeEnabled();
    await dialog.getByTestId("transition-reason").fill("e2e wrong proxy");
    await dialog.getByTestId("confirm-transition").click();
    await expect(dialog.getByTestId("transition-result")).toContainText("is now");
    await dialog.getByTestId("close-dialog").click();
    await expect(banner).toHaveCount(0);
    await expect(proxyRow(page, first.hostname)).toHaveAttribute("data-state", "active");
    await expect(proxyRow(page, second.hostname).getByTestId("action-drain")).toBeEnabled();
  });

  const audit = (await (await page.request.get(`/api/v1/audit?poolId=${pool.id}&limit=20`)).json()) as {
    items: { action: string; reason: string }[];
  };
  expect(audit.items.filter((a) => a.action === "proxy.abort").map((a) => a.reason)).toEqual([
    "e2e wrong proxy",
  ]);
});

test("a preview the pool outdates disables Confirm and says why until previewed again", async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page);
  const pool = await makePool(page);
  const target = pool.proxies[2]!;
  await page.goto(`/pools/${pool.id}`);
  await expect(page.getByTestId("pool-live")).toHaveAttribute("data-state", "live");
  await proxyRow(page, target.hostname).getByTestId("action-drain").click();

  const dialog = page.getByTestId("preview-dialog");
  const confirm = dialog.getByTestId("confirm-transition");
  await expect(dialog.getByTestId("preview-summary")).toHaveText(
    /^New flows go to the other 3; established flows still reach proxy-page-\d+-03 as secondary\.$/,
  );
  // Drain asks for a reason before Confirm.
  await expect(confirm).toBeDisabled();
  await expect(confirm).toHaveAttribute("title", "give a reason first");
  await dialog.getByTestId("transition-reason").fill("e2e stale preview");
  await expect(confirm).toBeEnabled();
  await expect(dialog.getByTestId("preview-stale")).toHaveCount(0);

  // Someone else changes the pool (new binds: a new table version) while the dialog is open.
  await call(page.request, "put", `/api/v1/pools/${pool.id}/binds`, {
    binds: [{ address: `${pool.net}.11`, proto: "tcp", portStart: 443 }],
    reason: "e2e: another operator",
  });
  const stale = dialog.getByTestId("preview-stale");
  await expect(stale).toContainText("The pool changed since this preview (it was computed against v");
  await expect(confirm).toBeDisabled();
  await expect(confirm).toHaveAttribute("title", "the preview is stale: preview again");

  await stale.getByTestId("preview-again").click();
  await expect(dialog.getByTestId("preview-stale")).toHaveCount(0);
  await expect(confirm).toBeEnabled();
  await confirm.click();
  await expect(dialog.getByTestId("transition-result")).toBeVisible();
  await expect(proxyRow(page, target.hostname)).toHaveAttribute("data-state", "draining");
});

for (const { name, width, height } of WIDTHS) {
  test(`pool page, its settings and new pool at ${name} px: fit, no errors, no serious a11y findings`, async ({
    page,
  }, testInfo) => {
    await page.setViewportSize({ width, height });
    await signIn(page);
    const pool = await makePool(page);
    const draining = pool.proxies[1]!;
    await call(page.request, "post", `/api/v1/proxies/${draining.id}/drain`, { reason: "e2e layout" });

    const errors = watchConsoleErrors(page);
    await page.goto(`/pools/${pool.id}`);
    await expect(page.getByTestId("change-banner")).toBeVisible();
    await expect(page.getByTestId("proxy-row")).toHaveCount(4);
    // The actions stay reachable: Deactivate of the draining proxy sits inside the viewport.
    const deactivate = proxyRow(page, draining.hostname).getByTestId("action-deactivate");
    await deactivate.scrollIntoViewIfNeeded();
    const box = await deactivate.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= width, `Deactivate at ${JSON.stringify(box)}`).toBe(
      true,
    );
    // The pool's own content fits (checkPage below measures the whole page, header included).
    const content = await page.evaluate(() => {
      const main = document.querySelector("main");
      return { scroll: main?.scrollWidth ?? 0, client: main?.clientWidth ?? 0 };
    });
    expect(content.scroll, "the pool page's content scrolls sideways").toBeLessThanOrEqual(content.client);
    await checkPage(page, testInfo, "pool", errors);

    await test.step("Tab onto a proxy's action selects its row", async () => {
      const [firstRow, drainingRow] = [
        proxyRow(page, pool.proxies[0]!.hostname),
        proxyRow(page, draining.hostname),
      ];
      // The first proxy's Drain is disabled (it waits); its "waits for" link is the focusable part.
      await firstRow.getByTestId("blocking-proxy").focus();
      await expect(firstRow).toHaveAttribute("aria-selected", "true");
      await page.keyboard.press("Tab");
      await expect(drainingRow.getByTestId("action-deactivate")).toBeFocused();
      await expect(drainingRow).toHaveAttribute("aria-selected", "true");
      await expect(firstRow).toHaveAttribute("aria-selected", "false");
    });

    await test.step("the Deactivate preview fits too", async () => {
      await page.getByTestId("change-banner").getByTestId("banner-deactivate").click();
      const dialog = page.getByTestId("preview-dialog");
      await expect(dialog.getByTestId("preview-summary")).toContainText("leaves the table");
      // Deactivate moves no primary row: those columns are left out, and said so.
      await expect(dialog.getByTestId("share-table")).not.toContainText("Primary");
      await expect(dialog.getByTestId("shares-columns-unchanged")).toHaveText(
        "No proxy's primary rows change.",
      );
      await expect(dialog.getByTestId("rows-primary-changed")).toHaveAttribute("data-value", "0");
      const box = await dialog.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= width, `dialog at ${JSON.stringify(box)}`).toBe(true);
      await checkPage(page, testInfo, "pool-preview", errors);
      await dialog.getByTestId("cancel-transition").click();
      await expect(dialog).toHaveCount(0);
    });

    await page.goto(`/pools/${pool.id}/settings`);
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    await checkPage(page, testInfo, "pool-settings", errors);

    await page.goto("/pools/new");
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    await checkPage(page, testInfo, "pool-new", errors);
  });
}
