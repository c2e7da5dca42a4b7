import type { APIRequestContext } from "@playwright/test";
import { expect, signIn, test } from "../support/fixtures";

/**
 * Proxy health on the pool page, pushed: a director's agent (its host token, over REST as the agent
 * does) reports a proxy failing its GUE check; the pool page shows it turn unhealthy without a
 * reload, with the director's view and the failing check; an operator pins it healthy with a reason.
 * A flapping proxy whose checks pass again is shown "held until …", counts down, and returns at the
 * hold's end by the console's own re-check (no further report), its version saying so.
 * Everything this spec touches it creates, under names unique to this run. (The lab test of issue 12
 * proves the checks themselves on real directors and proxies.)
 */
const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;

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

/**
 * A pool of three proxies (HTTP + GUE checks) served by one stand-in director whose host token
 * the test reports with, as that director's agent would. `tag` keeps each test's names apart.
 */
async function healthPool(api: APIRequestContext, tag: string) {
  const poolName = `e2e-health-${tag}${run}`;
  const directorName = `e2e-hc-director-${tag}${run}.lab`;
  const net = `198.18.${Math.floor(Math.random() * 256)}`;
  const pool = (await call(api, "post", "/api/v1/pools", {
    name: poolName,
    binds: [{ address: `${net}.10`, proto: "tcp", portStart: 443 }],
  })) as { id: string };
  for (let i = 1; i <= 3; i++)
    await call(api, "post", `/api/v1/pools/${pool.id}/proxies`, {
      address: `${net}.${20 + i}`,
      hostname: `e2e-hc-proxy-${i}-${tag}${run}`,
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
  /** The director's view of proxy i: GUE passing or timing out (HTTP answers), `up` since `since`. */
  const view = (i: number, up: boolean, since = new Date().toISOString()) => {
    const at = new Date().toISOString();
    return {
      poolId: pool.id,
      proxyId: proxies[i]!.id,
      up,
      since,
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
    };
  };
  /** POST /agent/health with the director's token; the console's reply. */
  const report = (views: ReturnType<typeof view>[]) =>
    call(api, "post", "/api/v1/agent/health", { views }, token);
  return { pool, proxies, directorName, view, report };
}

test("a proxy the directors find failing turns unhealthy live on the pool page; an operator pins it", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await signIn(page);
  const api = page.request;
  const { pool, proxies, directorName, view, report } = await healthPool(api, "");

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

  await test.step("the director reports proxy 1 down: the page turns it unhealthy without a reload", async () => {
    const reply = await report([view(0, false), view(1, true), view(2, true)]);
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

test("a flapping proxy whose checks pass again is shown held, with until when, and is released then", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await signIn(page);
  const api = page.request;
  const { pool, proxies, directorName, view, report } = await healthPool(api, "hold-");
  const hostname = proxies[0]!.hostname;
  await page.goto(`/pools/${pool.id}`);
  await expect(page.getByTestId("pool-live")).toHaveAttribute("data-state", "live");
  const row = page
    .getByTestId("pool-health")
    .locator(`[data-testid="proxy-health-row"][data-hostname="${hostname}"]`);
  const health = async () =>
    (
      (await (await api.get(`/api/v1/pools/${pool.id}/health`)).json()) as {
        proxies: {
          hostname: string;
          healthy: boolean;
          held: boolean;
          heldUntil: string | null;
          recentFlips: number;
          holdReason: string | null;
        }[];
      }
    ).proxies.find((p) => p.hostname === hostname)!;
  const clock = (iso: string) => `${iso.slice(11, 19)}Z`;

  await test.step("down, then its checks pass at once: held 10 s (one flip), said so, counting down", async () => {
    await report([view(0, false), view(1, true), view(2, true)]);
    await expect(row).toHaveAttribute("data-healthy", "false");
    const reply = await report([view(0, true), view(1, true), view(2, true)]);
    expect(reply["changed"]).toEqual([]);
    const h = await health();
    expect(h).toMatchObject({ healthy: false, held: true, recentFlips: 1 });
    expect(h.holdReason).toBe(
      `up on 1 of 1 directors (${directorName}), held until ${clock(h.heldUntil!)}: flapped once in the last 10 min`,
    );
    await expect(row).toHaveAttribute("data-held", "true");
    await expect(row.getByTestId("health-hold")).toBeVisible();
    await expect(row).toContainText(
      `unhealthy — held until ${clock(h.heldUntil!)} (flapped once in the last 10 min)`,
    );
    await expect(row.getByTestId("hold-passing")).toHaveText(
      "checks pass on 1 of 1 directors, held after flapping",
    );
    // The proxies table says the same beside its health dot.
    const tableRow = page.locator(`[data-testid="proxy-row"][data-proxy-id="${proxies[0]!.id}"]`);
    await expect(tableRow.getByTestId("held-until")).toContainText(`held until ${clock(h.heldUntil!)}`);
    const countdown = row.getByTestId("hold-countdown");
    await expect(countdown).toHaveText(/^back in \d+ s if its checks keep passing$/);
    const first = Number(/\d+/.exec((await countdown.textContent()) ?? "")![0]);
    expect(first).toBeLessThanOrEqual(10);
    await expect(countdown).not.toHaveText(`back in ${first} s if its checks keep passing`, {
      timeout: 3_000,
    });
  });

  await test.step("at the hold's end it returns without another report, and the version says why", async () => {
    // No report: the console's own re-check at the hold's end releases it (views stay fresh 15 s).
    await expect(row).toHaveAttribute("data-healthy", "true", { timeout: 15_000 });
    await expect(row).toHaveAttribute("data-held", "false");
    await expect(row.getByTestId("health-hold")).toHaveCount(0);
    const current = (await (await api.get(`/api/v1/pools/${pool.id}/tables/current`)).json()) as {
      cause: string;
    };
    expect(current.cause).toBe(`health: ${hostname} up (hold released)`);
  });

  await test.step("down again (a third flip): the next hold is 40 s, and says 3 times", async () => {
    await report([view(0, false), view(1, true), view(2, true)]);
    await expect(row).toHaveAttribute("data-healthy", "false");
    await report([view(0, true), view(1, true), view(2, true)]);
    await expect(row).toHaveAttribute("data-held", "true");
    const h = await health();
    expect(h).toMatchObject({ held: true, recentFlips: 3 });
    await expect(row).toContainText(
      `unhealthy — held until ${clock(h.heldUntil!)} (flapped 3 times in the last 10 min)`,
    );
    await expect(row.getByTestId("hold-countdown")).toHaveText(/^back in (3\d|40) s if/);
  });
});
