import type { APIRequestContext } from "@playwright/test";
import { expect, signIn, test } from "../support/fixtures";
import { checkPage, WIDTHS, watchConsoleErrors } from "../support/page-checks";

/**
 * The audit log as an operator reads it: targets by name, changes as "field: old → new", refused
 * attempts (a 409 drain, a read-only token's 403) on record as refused with the reason, and filters
 * by action, actor, target and time that live in the URL. Everything it touches it creates, under
 * names unique to this run.
 */
const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
const poolName = `e2e-audit-${run}`;
const proxyName = `e2e-audit-proxy-1-${run}`;
const tokenName = `e2e-audit-read-${run}`;
const net = `198.19.${Math.floor(Math.random() * 256)}`;

async function call(request: APIRequestContext, method: "post", url: string, data: unknown, token?: string) {
  const res = await request[method](url, {
    data,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return { status: res.status(), body: (await res.json()) as Record<string, unknown> };
}

async function made(request: APIRequestContext, url: string, data: unknown) {
  const res = await call(request, "post", url, data);
  expect(res.status, `POST ${url}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

test("audit log: names, readable changes, refused attempts, filters in the URL", async ({ page }) => {
  test.setTimeout(120_000);
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page);
  const api = page.request;

  const pool = (await made(api, "/api/v1/pools", {
    name: poolName,
    binds: [{ address: `${net}.10`, proto: "tcp", portStart: 443 }],
  })) as { id: string };
  const proxies: { id: string }[] = [];
  for (let i = 1; i <= 3; i++) {
    proxies.push(
      (await made(api, `/api/v1/pools/${pool.id}/proxies`, {
        address: `${net}.${20 + i}`,
        hostname: `e2e-audit-proxy-${i}-${run}`,
      })) as { id: string },
    );
  }
  const proxyId = proxies[0]!.id;
  await made(api, `/api/v1/proxies/${proxyId}/drain`, { reason: `maintenance ${run}` });
  // Draining it again is refused (409); a read-only token may not drain at all (403).
  expect(
    (await call(api, "post", `/api/v1/proxies/${proxyId}/drain`, { reason: `again ${run}` })).status,
  ).toBe(409);
  const token = (await made(api, "/api/v1/tokens", { name: tokenName, scopes: ["read"] })) as {
    token: string;
  };
  expect(
    (await call(api, "post", `/api/v1/proxies/${proxyId}/drain`, { reason: `peek ${run}` }, token.token))
      .status,
  ).toBe(403);

  await test.step("filter by target name and action: the drain and both refusals, by name", async () => {
    await page.goto("/audit");
    await page.getByTestId("audit-target-filter").fill(proxyName);
    await page.getByTestId("audit-action-filter").selectOption("proxy.drain");
    await page.getByTestId("audit-apply").click();
    await expect(page).toHaveURL(/action=proxy.drain/);
    await expect(page).toHaveURL(new RegExp(`target=${proxyName}`));
    const rows = page.getByTestId("audit-row");
    await expect(rows).toHaveCount(3);
    await expect(page.locator('[data-testid="audit-row"][data-outcome="refused"]')).toHaveCount(2);

    const done = page.locator('[data-testid="audit-row"][data-outcome="done"]');
    await expect(done).toContainText(proxyName);
    await expect(done).toContainText(`maintenance ${run}`);
    await expect(done.getByTestId("audit-change")).toContainText("state: active→draining");
    await expect(done.getByTitle(`proxy ${proxyId}`)).toHaveText(proxyName);
    await expect(done).not.toContainText("{");

    const forbidden = page.locator('[data-testid="audit-row"][data-outcome="refused"]', {
      hasText: tokenName,
    });
    await expect(forbidden.getByTestId("audit-refused")).toHaveText("refused");
    await expect(forbidden.getByTestId("audit-refusal")).toContainText("'operate' scope");
    await expect(forbidden).toContainText(`peek ${run}`);
  });

  await test.step("the filters survive a reload; actor and outcome narrow further", async () => {
    await page.reload();
    await expect(page.getByTestId("audit-target-filter")).toHaveValue(proxyName);
    await expect(page.getByTestId("audit-row")).toHaveCount(3);
    await page.getByTestId("audit-actor-filter").fill(tokenName);
    await page.getByTestId("audit-apply").click();
    await expect(page.getByTestId("audit-row")).toHaveCount(1);
    await expect(page.getByTestId("audit-row")).toHaveAttribute("data-outcome", "refused");
    await page.getByTestId("audit-actor-filter").fill("");
    await page.getByTestId("audit-outcome-filter").selectOption("refused");
    await page.getByTestId("audit-apply").click();
    await expect(page).toHaveURL(/outcome=refused/);
    await expect(page.getByTestId("audit-row")).toHaveCount(2);
  });

  await test.step("a time range before the events shows none", async () => {
    await page.getByTestId("audit-to").fill("2001-01-01T00:00");
    await page.getByTestId("audit-apply").click();
    await expect(page).toHaveURL(/to=2001-01-01T00%3A00/);
    await expect(page.getByTestId("audit-empty")).toHaveText("No events match these filters.");
  });

  await test.step("sign-ins are hidden until asked for", async () => {
    await page.goto("/audit?action=session.create");
    await expect(page.getByTestId("audit-row").first()).toBeVisible();
    await page.goto("/audit");
    await expect(page.getByTestId("audit-row").first()).toBeVisible();
    await expect(page.locator('[data-testid="audit-row"][data-action="session.create"]')).toHaveCount(0);
    await page.getByTestId("audit-sessions").check();
    await page.getByTestId("audit-apply").click();
    await expect(page).toHaveURL(/sessions=show/);
    await expect(
      page.locator('[data-testid="audit-row"][data-action="session.create"]').first(),
    ).toBeVisible();
  });
});

for (const size of WIDTHS) {
  test(`audit log page at ${size.name} px`, async ({ page }, testInfo) => {
    await page.setViewportSize({ width: size.width, height: size.height });
    await signIn(page);
    const errors = watchConsoleErrors(page);
    await page.goto("/audit?outcome=");
    await expect(page.getByTestId("audit-row").first()).toBeVisible();
    await checkPage(page, testInfo, "audit", errors);
  });
}
