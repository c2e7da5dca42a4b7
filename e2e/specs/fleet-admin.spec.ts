import type { Browser, Page } from "@playwright/test";
import { expect, signIn, test } from "../support/fixtures";

/**
 * An admin runs the fleet from the console: a pool with two binds (a bad address is refused next to
 * its field), three proxies, a director serving it (an overlapping pool is refused naming both),
 * hash fields changed through the preview, and an operator user who is not offered any of it.
 * Everything this spec touches it creates, under names unique to this run.
 */
const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
const poolName = `e2e-fleet-${run}`;
const otherPoolName = `e2e-overlap-${run}`;
const directorName = `e2e-director-${run}.lab`;
const operatorEmail = `e2e-operator-${run}@tide.local`;
/** A /24 of TEST-NET-2 picked per run, so the binds of earlier runs never overlap these. */
const net = `198.51.${Math.floor(Math.random() * 256)}`;

test.use({ viewport: { width: 1440, height: 900 } });

/**
 * No sideways scroll in the page's content: nothing in <main> reaches past the viewport (tables
 * scroll inside their own panel, which clips them). The shared header is checked where it lives.
 */
async function expectNoSideScroll(page: Page): Promise<void> {
  const overflow = await page.evaluate(() => {
    const main = document.querySelector("main");
    if (!main) return { missing: true };
    return {
      scroll: main.scrollWidth - main.clientWidth,
      right: Math.max(0, Math.ceil(main.getBoundingClientRect().right) - window.innerWidth),
    };
  });
  expect(overflow).toEqual({ scroll: 0, right: 0 });
}

async function signInAs(browser: Browser, baseURL: string, email: string, password: string) {
  const context = await browser.newContext({ baseURL });
  const page = await context.newPage();
  await page.goto("/sign-in");
  await page.getByTestId("sign-in-email").fill(email);
  await page.getByTestId("sign-in-password").fill(password);
  await page.getByTestId("sign-in-submit").click();
  await expect(page.getByTestId("signed-in-role")).toHaveText("operator");
  return { context, page };
}

test("admin creates a pool, proxies, a director, changes hash fields; an operator is not offered it", async ({
  page,
  browser,
  baseURL,
}) => {
  test.setTimeout(180_000);
  await signIn(page);
  let poolId = "";
  let otherPoolId = "";

  await test.step("new pool: a bad bind address is refused next to its field", async () => {
    await page.goto("/");
    await page.getByTestId("new-pool").click();
    await expect(page).toHaveURL(/\/pools\/new$/);
    const form = page.getByTestId("new-pool-form");
    await form.getByTestId("pool-name-input").fill(poolName);
    await form.getByTestId("pool-description-input").fill("made by fleet-admin.spec");
    await expect(form.getByTestId("hash-field-src_addr")).toBeChecked();
    const rows = form.getByTestId("bind-row");
    await rows.nth(0).getByTestId("bind-address").fill(`${net}.10`);
    await rows.nth(0).getByTestId("bind-ports").fill("443");
    await form.getByTestId("add-bind").click();
    await expect(rows).toHaveCount(2);
    await rows.nth(1).getByTestId("bind-address").fill(`${net}.300`);
    await rows.nth(1).getByTestId("bind-proto").selectOption("udp");
    await rows.nth(1).getByTestId("bind-ports").fill("8000-8099");
    await form.getByTestId("create-pool-submit").click();

    const error = rows.nth(1).getByTestId("bind-address-error");
    await expect(error).toContainText(`"${net}.300" is not an IP address or CIDR`);
    await expect(rows.nth(1).getByTestId("bind-address")).toHaveAttribute("aria-invalid", "true");
    await expect(rows.nth(0).getByTestId("bind-address-error")).toHaveCount(0);
    // Plain words: the form says where to look, never the error code.
    await expect(form.getByTestId("form-error")).toHaveText("Not saved: see the marked field.");
    await expect(page).toHaveURL(/\/pools\/new$/);

    await rows.nth(1).getByTestId("bind-address").fill(`${net}.64/28`);
    await form.getByTestId("create-pool-submit").click();
    await expect(page.getByTestId("pool-name")).toHaveText(poolName);
    poolId = /\/pools\/(pool_[^/?#]+)/.exec(page.url())?.[1] ?? "";
    expect(poolId).not.toBe("");
    await expect(page.getByText(`tcp ${net}.10:443`, { exact: true })).toBeVisible();
    await expect(page.getByText(`udp ${net}.64/28:8000-8099`, { exact: true })).toBeVisible();
    await expect(page.getByTestId("current-version")).toContainText("none yet");
  });

  await test.step("three proxies join active (the pool carries no traffic yet)", async () => {
    await page.getByTestId("open-add-proxy").click();
    const dialog = page.getByTestId("add-proxy-dialog");
    await expect(dialog).toBeVisible();
    for (const n of [1, 2, 3]) {
      await dialog.getByTestId("proxy-address-input").fill(`10.77.0.${n}`);
      await dialog.getByTestId("proxy-hostname-input").fill(`${poolName}-proxy-${n}`);
      await dialog.getByTestId("add-proxy-submit").click();
      await expect(dialog.getByTestId("added-proxy")).toHaveCount(n);
    }
    await expect(dialog.locator('[data-testid="added-proxy"][data-state="active"]')).toHaveCount(3);
    await dialog.getByTestId("close-add-proxy").click();
    await expect(dialog).toBeHidden();
    await expect(page.locator('[data-testid="proxy-row"][data-state="active"]')).toHaveCount(3);
    // Each joining proxy wrote a version: v1, v2, v3.
    await expect(page.getByTestId("current-version")).toHaveAttribute("data-version", "3");
  });

  await test.step("register a director and assign the pool", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Directors" }).click();
    await expect(page).toHaveURL(/\/directors$/);
    await page.getByTestId("director-hostname-input").fill(directorName);
    await page.getByTestId("register-director-submit").click();
    await expect(page.getByTestId("director-registered")).toContainText(directorName);
    const row = page.locator(`[data-testid="admin-director-row"][data-hostname="${directorName}"]`);
    await expect(row).toBeVisible();
    await row.getByTestId("assign-pool-select").selectOption({ label: poolName });
    await row.getByTestId("assign-pool").click();
    await expect(row.locator(`[data-testid="served-pool"][data-pool-id="${poolId}"]`)).toBeVisible();
    await expect(row.getByTestId("director-error")).toHaveCount(0);
  });

  await test.step("a pool whose bind overlaps is refused on the same director, naming both pools", async () => {
    const res = await page.request.post("/api/v1/pools", {
      data: { name: otherPoolName, binds: [{ address: `${net}.64/26`, proto: "udp", portStart: 8050 }] },
    });
    expect(res.status()).toBe(200);
    otherPoolId = ((await res.json()) as { id: string }).id;
    await page.reload();
    const row = page.locator(`[data-testid="admin-director-row"][data-hostname="${directorName}"]`);
    await row.getByTestId("assign-pool-select").selectOption({ label: otherPoolName });
    await row.getByTestId("assign-pool").click();
    const error = row.getByTestId("director-error");
    await expect(error).toContainText(`"${poolName}"`);
    await expect(error).toContainText(`"${otherPoolName}"`);
    await expect(error).not.toContainText("conflict");
    await expect(row.getByTestId("served-pool")).toHaveCount(1);
  });

  await test.step("hash fields: preview how many flows move, then confirm", async () => {
    await page.goto(`/pools/${poolId}`);
    await page.getByTestId("pool-settings-link").click();
    await expect(page).toHaveURL(new RegExp(`/pools/${poolId}/settings$`));
    const panel = page.getByTestId("hash-fields-change");
    await expect(panel.getByTestId("current-hash-fields")).toHaveText("src_addr");
    await expect(panel.getByTestId("preview-hash-fields")).toBeDisabled();
    await panel.getByTestId("hash-field-src_port").check();
    await panel.getByTestId("preview-hash-fields").click();
    const moved = panel.getByTestId("hash-preview-moved");
    await expect(moved).toContainText("sample flows");
    expect(Number(await moved.getAttribute("data-moved"))).toBeGreaterThan(0);
    // A director serves the pool: the change migrates and says it keeps connections.
    await expect(panel.getByTestId("hash-preview-keeps")).toHaveAttribute("data-migrates", "true");
    await expect(panel.getByTestId("hash-preview-keeps")).toContainText("Established connections are kept");
    await panel.getByTestId("hash-fields-reason").fill("e2e: spread one client's connections");
    await panel.getByTestId("confirm-hash-fields").click();
    await expect(panel.getByTestId("hash-fields-saved")).toContainText("table v4 written");
    await expect(panel.getByTestId("current-hash-fields")).toHaveText("src_addr, src_port");
    // The migration shows, here and on the pool page; another change waits for it.
    const banner = panel.getByTestId("hash-migration-banner");
    await expect(banner).toContainText("Hash fields migrating src_addr → src_addr, src_port");
    await panel.getByTestId("hash-field-dst_port").check();
    await expect(panel.getByTestId("preview-hash-fields")).toBeDisabled();
    await panel.getByTestId("hash-field-dst_port").uncheck();
    await page.screenshot({ path: test.info().outputPath("pool-settings-wide.png"), fullPage: true });
    await page.goto(`/pools/${poolId}`);
    await expect(page.getByTestId("hash-migration-banner")).toContainText("for ");
    // No proxy reports alternate-hash counters here (no agents): the banner says it does not know.
    await expect(page.getByTestId("hash-migration-alternate")).toContainText("unknown");
    await page.getByTestId("finish-hash-migration").click();
    await page.getByTestId("confirm-finish-hash-migration").click();
    await expect(page.getByTestId("hash-migration-banner")).toHaveCount(0);
    await expect(page.getByTestId("current-version")).toHaveAttribute("data-version", "5");
    await page.getByTestId("pool-settings-link").click();
    // Active proxies cannot be removed; the reason is on the button.
    const remove = page.getByTestId("admin-proxy-row").first().getByTestId("remove-proxy");
    await expect(remove).toBeDisabled();
    await expect(remove).toHaveAttribute("title", /Only an inactive proxy can be removed/);
    // Deleting is refused while the director serves the pool, with the API's reason.
    await page.getByTestId("delete-pool").click();
    await page.getByTestId("confirm-delete-pool").click();
    await expect(page.getByTestId("delete-pool-error")).toContainText(`directors serve it (${directorName}`);
  });

  let password = "";
  await test.step("create an operator user; the password is shown once", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Users" }).click();
    await expect(page).toHaveURL(/\/settings\/users$/);
    await page.getByTestId("user-email-input").fill(operatorEmail);
    await page.getByTestId("user-name-input").fill("E2E Operator");
    await page.getByTestId("user-role-input").selectOption("operator");
    await page.getByTestId("create-user-submit").click();
    const secret = page.getByTestId("created-password");
    await expect(secret).toContainText(`${operatorEmail} created as operator`);
    password = (await secret.getByTestId("created-password-value").textContent()) ?? "";
    expect(password.length).toBeGreaterThanOrEqual(12);
    await secret.getByTestId("created-password-dismiss").click();
    await expect(secret).toHaveCount(0);
    const row = page.locator(`[data-testid="user-row"][data-email="${operatorEmail}"]`);
    await expect(row).toHaveAttribute("data-role", "operator");
    await expect(row).toHaveAttribute("data-disabled", "false");
  });

  await test.step("reset the operator's password (shown once); the last admin keeps the role", async () => {
    const row = page.locator(`[data-testid="user-row"][data-email="${operatorEmail}"]`);
    await row.getByTestId("reset-password").click();
    await row.getByTestId("confirm-reset-password").click();
    const secret = row.getByTestId("reset-password-secret");
    await expect(secret).toContainText(`New password for ${operatorEmail}`);
    const next = (await secret.getByTestId("reset-password-secret-value").textContent()) ?? "";
    expect(next.length).toBeGreaterThanOrEqual(12);
    expect(next).not.toBe(password);
    password = next;
    await secret.getByTestId("reset-password-secret-dismiss").click();
    await expect(secret).toHaveCount(0);

    // The e2e stack seeds exactly one admin, the one signed in here.
    const adminEmail = process.env.TIDE_E2E_EMAIL ?? "";
    expect(adminEmail).not.toBe("");
    const me = page.locator(`[data-testid="user-row"][data-email="${adminEmail}"]`);
    await me.getByTestId("user-role-select").selectOption("operator");
    await expect(me.getByTestId("user-error")).toContainText("is the last enabled admin");
    await expect(me.getByTestId("user-error")).not.toContainText("conflict");
    await expect(me).toHaveAttribute("data-role", "admin");
    await expect(me.getByTestId("user-role-select")).toHaveValue("admin");
  });

  await test.step("the operator is not offered admin actions", async () => {
    const { context, page: op } = await signInAs(browser, baseURL ?? "", operatorEmail, password);
    try {
      await op.goto("/");
      await expect(op.getByTestId("new-pool")).toBeDisabled();
      await op.goto(`/pools/${poolId}`);
      await expect(op.getByTestId("pool-admin-bar")).toHaveAttribute("data-admin", "false");
      await expect(op.getByTestId("open-add-proxy")).toBeDisabled();
      await expect(op.getByTestId("pool-settings-link")).toBeDisabled();
      await expect(op.getByTestId("admin-reason")).toContainText("Needs the admin role; you are an operator");
      // Operating stays offered: drain is an operator's action.
      await expect(op.getByTestId("proxy-row").first().getByTestId("action-drain")).toBeEnabled();
      await op.goto(`/pools/${poolId}/settings`);
      await expect(op.getByTestId("pool-settings-forbidden")).toBeVisible();
      await expect(op.getByTestId("hash-fields-change")).toHaveCount(0);
      await op.goto("/directors");
      await expect(
        op.locator(`[data-testid="admin-director-row"][data-hostname="${directorName}"]`),
      ).toBeVisible();
      await expect(op.getByTestId("register-director-form")).toHaveCount(0);
      await expect(op.getByTestId("assign-pool-select")).toHaveCount(0);
      await op.goto("/settings/users");
      await expect(op.getByTestId("users-forbidden")).toBeVisible();
      await expect(op.getByTestId("users-table")).toHaveCount(0);
    } finally {
      await context.close();
    }
  });

  await test.step("the admin pages fit a 1440 px wide screen, header included", async () => {
    for (const path of ["/pools/new", `/pools/${poolId}/settings`, "/directors", "/settings/users"]) {
      await page.goto(path);
      await expect(page.locator("main h1")).toBeVisible();
      await expectNoSideScroll(page);
      const pageOverflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect(pageOverflow).toBe(0);
    }
  });

  await test.step("unassign the director, then delete the pool with its three active proxies", async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`/pools/${poolId}/settings`);
    await page.getByTestId("delete-pool").click();
    await page.getByTestId("confirm-delete-pool").click();
    const refused = page.getByTestId("delete-pool-error");
    await expect(refused).toContainText(`tidectl director unassign ${directorName} ${poolName}`);
    await page.goto("/directors");
    const row = page.locator(`[data-testid="admin-director-row"][data-hostname="${directorName}"]`);
    const served = row.locator(`[data-testid="served-pool"][data-pool-id="${poolId}"]`);
    await served.getByTestId("unassign-pool").click();
    await served.getByTestId("confirm-unassign-pool").click();
    await expect(row.locator(`[data-testid="served-pool"][data-pool-id="${poolId}"]`)).toHaveCount(0);
    await page.goto(`/pools/${poolId}/settings`);
    await expect(page.locator('[data-testid="admin-proxy-row"]')).toHaveCount(3);
    await page.getByTestId("delete-pool").click();
    await expect(
      page.getByText(`Delete ${poolName}, its 3 proxies, binds and table versions?`),
    ).toBeVisible();
    await page.getByTestId("confirm-delete-pool").click();
    await expect(page).toHaveURL(/\/$/);
    const gone = await page.request.get(`/api/v1/pools/${poolId}`);
    expect(gone.status()).toBe(404);
  });

  await test.step("the admin pages fit a 390 px wide screen", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const path of ["/pools/new", `/pools/${otherPoolId}/settings`, "/directors", "/settings/users"]) {
      await page.goto(path);
      await expect(page.locator("main h1")).toBeVisible();
      await expectNoSideScroll(page);
      const name = path.replaceAll("/", "-").replace(/pool_[^-]+/, "pool");
      await page.screenshot({ path: test.info().outputPath(`narrow${name}.png`), fullPage: true });
    }
  });
});
