import type { APIRequestContext } from "@playwright/test";
import { expect, signIn, test } from "../support/fixtures";

/**
 * Proxy health on the pool page, pushed: a director's agent (its host token, over REST as the agent
 * does) reports a proxy failing its GUE check; the pool page shows it turn unhealthy without a
 * reload, with the director's view and the failing check; an operator pins it healthy with a reason.
 * Everything this spec touches it creates, under names unique to this run. (The lab test of issue 12
 * proves the checks themselves on real directors and proxies.)
 */
const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
const poolName = `e2e-health-${run}`;
const directorName = `e2e-hc-director-${run}.lab`;
const net = `198.18.${Math.floor(Math.random() * 256)}`;

test.use({ viewport: { width: 1440, height: 900 } });

async function call(
  request: APIRequestContext,
  method: "post" | "put",
  url: string,
  data: unknown,
  token?: string,
) {
  const res = await request[method](url, {
    data,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  expect(res.status(), `${method.toUpperCase()} ${url}: ${await res.text()}`).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
}

test("a proxy the directors find failing turns unhealthy live on the pool page; an operator pins it", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await signIn(page);
  const api = page.request;

  const pool = (await call(api, "post", "/api/v1/pools", {
    name: poolName,
    binds: [{ address: `${net}.10`, proto: "tcp", portStart: 443 }],
  })) as { id: string };
  for (let i = 1; i <= 3; i++)
    await call(api, "post", `/api/v1/pools/${pool.id}/proxies`, {
      address: `${net}.${20 + i}`,
      hostname: `e2e-hc-proxy-${i}-${run}`,
    });
  const director = (await call(api, "post", "/api/v1/directors", { hostname: directorName })) as {
    id: string;
  };
  await call(api, "put", `/api/v1/directors/${director.id}/pools/${pool.id}`, {});
  await call(api, "put", `/api/v1/pools/${pool.id}/health-check`, {
    healthCheck: {
      intervalMs: 2000,
      timeoutMs: 1000,
      rise: 3,
      fall: 3,
      gue: true,
      service: { kind: "http", port: 80, path: "/health" },
    },
    reason: "e2e",
  });
  const { token } = (await call(api, "post", "/api/v1/host-tokens", { hostname: directorName })) as {
    token: string;
  };
  const proxies = (
    (await (await api.get(`/api/v1/pools/${pool.id}`)).json()) as {
      proxies: { id: string; hostname: string }[];
    }
  ).proxies;

  await page.goto(`/pools/${pool.id}`);
  await expect(page.getByTestId("pool-live")).toHaveAttribute("data-state", "live");
  await expect(page.getByTestId("pool-live")).toContainText(/updated \d+s ago/);
  const panel = page.getByTestId("pool-health");
  await expect(panel.getByTestId("health-check-config")).toHaveText(
    "GUE path + HTTP :80 /health (200) every 2 s, timeout 1 s, up after 3 passing, down after 3 failing rounds",
  );
  const row = panel.locator(`[data-testid="proxy-health-row"][data-hostname="${proxies[0]!.hostname}"]`);
  await expect(row).toHaveAttribute("data-healthy", "true");
  await expect(row).toContainText("no director has reported");

  const at = new Date().toISOString();
  const view = (i: number, up: boolean) => ({
    poolId: pool.id,
    proxyId: proxies[i]!.id,
    up,
    since: at,
    checks: [
      {
        kind: "gue",
        ok: up,
        latencyUs: up ? 420 : null,
        detail: up ? "echo reply" : "timeout after 1000 ms",
        at,
      },
      { kind: "http", ok: true, latencyUs: 1800, detail: "HTTP 200", at },
    ],
  });

  await test.step("the director reports proxy 1 down: the page turns it unhealthy without a reload", async () => {
    const reply = await call(
      api,
      "post",
      "/api/v1/agent/health",
      { views: [view(0, false), view(1, true), view(2, true)] },
      token,
    );
    expect(reply["changed"]).toEqual([expect.objectContaining({ proxyId: proxies[0]!.id, healthy: false })]);
    await expect(row).toHaveAttribute("data-healthy", "false", { timeout: 5_000 });
    const seen = row.locator(`[data-testid="director-view"][data-director="${directorName}"]`);
    await expect(seen).toHaveAttribute("data-up", "false");
    await expect(seen.locator('[data-kind="gue"]')).toHaveText("✗ gue: timeout after 1000 ms");
    await expect(seen.locator('[data-kind="http"]')).toHaveText("✓ http 1.8 ms");
    const tableRow = page.locator(`[data-testid="proxy-row"][data-proxy-id="${proxies[0]!.id}"]`);
    await expect(tableRow.getByTestId("health")).toHaveAttribute("data-healthy", "false");
    await expect(tableRow.getByTestId("health-reason")).toHaveText(
      `down on 1 of 1 directors (${directorName}): ${directorName} gue: timeout after 1000 ms`,
    );
    await expect(panel.getByTestId("fail-open")).toHaveCount(0);
  });

  await test.step("an operator pins it healthy with a reason; the audit log keeps it", async () => {
    await expect(row.getByTestId("pin-healthy")).toBeDisabled(); // no reason yet
    await row.getByTestId("pin-reason").fill("false alarm: GUE port filtered by a test ACL");
    await row.getByTestId("pin-healthy").click();
    await expect(row).toHaveAttribute("data-healthy", "true");
    await expect(row).toContainText("pinned");
    await expect(row.getByTestId("unpin")).toBeVisible();
    const audit = (await (await api.get(`/api/v1/audit?poolId=${pool.id}&limit=20`)).json()) as unknown;
    expect(JSON.stringify(audit)).toContain("false alarm: GUE port filtered by a test ACL");
  });
});
