import type { APIRequestContext } from "@playwright/test";
import { expect, signIn, test } from "../support/fixtures";
import { createHostToken, dataPlane, hello, observation } from "../support/host-samples";

/**
 * Fleet changes that break connections say so before they are applied (issue 26 item 1). A pool
 * with two binds (VIP:443 and VIP:8081), one proxy and one director; the proxy's agent (a stand-in
 * posting a reading every second) reports 30 established connections to :443 and 7 to :8081.
 * Removing the :8081 bind in the pool settings: the form predicts exactly 7 break, Save waits for a
 * reason (the API refuses without one), and the audit event keeps it. Unassigning the director,
 * the pool's last: the row says the 30 break and Confirm waits for a reason too. The spec makes
 * its own pool, host and director under names unique to this run, and removes the pool.
 */
const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
const ON_443 = 30;
const ON_8081 = 7;

async function call(api: APIRequestContext, method: "post" | "put", url: string, data: unknown) {
  const res = await api[method](url, { data });
  expect(res.status(), `${method.toUpperCase()} ${url}: ${await res.text()}`).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
}

/** A stand-in agent for `hostname`: one reading a second with `established` sockets, until stopped. */
function reportEstablished(
  request: APIRequestContext,
  token: string,
  hostname: string,
  established: { address: string; port: number; count: number }[],
): { stop: () => Promise<void> } {
  let t = 0;
  let stopped = false;
  const post = async () => {
    const o = observation({ hostname, t, at: new Date(), overflowPerS: 0 });
    t++;
    (o.namespaces[1] as Record<string, unknown>).established = established;
    const res = await request.post("/api/v1/agent/observations", {
      headers: { authorization: `Bearer ${token}` },
      data: { observations: [o], dataPlane, replayed: false },
    });
    expect(res.status(), await res.text()).toBe(200);
  };
  const loop = (async () => {
    while (!stopped) {
      await post();
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

test("removing a bind with connections: the form predicts the break and asks a reason", async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page);
  const net = `198.18.${Math.floor(Math.random() * 250)}`;
  const vip = `${net}.10`;
  const poolName = `e2e-safety-${run}`;
  const pool = (await call(page.request, "post", "/api/v1/pools", {
    name: poolName,
    binds: [
      { address: vip, proto: "tcp", portStart: 443 },
      { address: vip, proto: "tcp", portStart: 8081 },
    ],
  })) as { id: string };
  const proxyHost = `proxy-safety-01.${run}.example.net`;
  // Joins active (no director serves the pool yet): the pool has a table the director then serves.
  await call(page.request, "post", `/api/v1/pools/${pool.id}/proxies`, {
    address: `${net}.21`,
    hostname: proxyHost,
  });
  const directorHost = `director-safety-01.${run}.example.net`;
  const director = (await call(page.request, "post", "/api/v1/directors", { hostname: directorHost })) as {
    id: string;
  };
  await call(page.request, "put", `/api/v1/directors/${director.id}/pools/${pool.id}`, {});

  const token = await createHostToken(page, proxyHost);
  await hello(page.request, token, proxyHost);
  const agent = reportEstablished(page.request, token, proxyHost, [
    { address: vip, port: 443, count: ON_443 },
    { address: vip, port: 8081, count: ON_8081 },
  ]);
  try {
    await test.step("the binds form: exactly the :8081 connections break, Save waits for a reason", async () => {
      await page.goto(`/pools/${pool.id}/settings`);
      const form = page.getByTestId("pool-binds-form");
      const rows = form.getByTestId("bind-row");
      await expect(rows).toHaveCount(2);
      // Nothing edited: no prediction, Save as before.
      await expect(form.getByTestId("binds-safety")).toHaveCount(0);
      await rows.nth(1).getByTestId("remove-bind").click();

      const warning = form.getByTestId("binds-safety");
      await expect(warning).toHaveAttribute("data-breaks", "true", { timeout: 15_000 });
      await expect(warning).toHaveAttribute("data-count", String(ON_8081));
      await expect(warning).toHaveAttribute("role", "alert");
      await expect(warning).toHaveText(
        `The directors stop forwarding tcp/${vip}:8081: ${ON_8081} established connections ` +
          `(${ON_8081} on ${proxyHost}) to ${vip}:8081 break.`,
      );
      const save = form.getByTestId("save-binds");
      await expect(save).toBeDisabled();
      await expect(save).toHaveAttribute("title", "give a reason first");

      // The API refuses the same change without a reason.
      const refused = await page.request.put(`/api/v1/pools/${pool.id}/binds`, {
        data: { binds: [{ address: vip, proto: "tcp", portStart: 443 }] },
      });
      expect(refused.status()).toBe(422);
      expect(((await refused.json()) as { message: string }).message).toContain(
        `would break ${ON_8081} established connections (${ON_8081} on ${proxyHost}) to ${vip}:8081`,
      );

      // Putting the bind back: nothing breaks, no reason asked.
      await form.getByTestId("add-bind").click();
      await rows.nth(1).getByTestId("bind-address").fill(vip);
      await rows.nth(1).getByTestId("bind-ports").fill("8080-8089");
      await expect(warning).toHaveAttribute("data-breaks", "false");
      await expect(save).toBeEnabled();
      await rows.nth(1).getByTestId("remove-bind").click();
      await expect(warning).toHaveAttribute("data-breaks", "true");
      await expect(save).toBeDisabled();

      await form.getByTestId("binds-reason").fill("e2e: 8081 retired");
      await expect(save).toBeEnabled();
      await save.click();
      await expect(form.getByTestId("binds-saved")).toBeVisible();
      await expect(rows).toHaveCount(1);
    });

    await test.step("unassigning the pool's last director: its connections break, a reason is asked", async () => {
      await page.goto("/directors");
      const row = page.locator(`[data-testid="admin-director-row"][data-hostname="${directorHost}"]`);
      const served = row.locator(`[data-testid="served-pool"][data-pool-id="${pool.id}"]`);
      await served.getByTestId("unassign-pool").click();
      const said = served.getByTestId("unassign-pool-safety");
      await expect(said).toHaveAttribute("data-breaks", "true", { timeout: 15_000 });
      await expect(said).toHaveText(
        `Nothing else serves ${poolName}: ${ON_443} established connections break.`,
      );
      const confirm = served.getByTestId("confirm-unassign-pool");
      await expect(confirm).toBeDisabled();
      await served.getByTestId("unassign-pool-reason").fill("e2e: site closes");
      await confirm.click();
      await expect(row.locator(`[data-testid="served-pool"][data-pool-id="${pool.id}"]`)).toHaveCount(0);
      await expect(row.getByTestId("director-error")).toHaveCount(0);
    });
  } finally {
    await agent.stop();
  }

  const audit = (await (await page.request.get(`/api/v1/audit?poolId=${pool.id}&limit=50`)).json()) as {
    items: { action: string; reason: string; outcome: string }[];
  };
  const done = audit.items.filter((a) => a.outcome === "done");
  expect(done.filter((a) => a.action === "pool.binds").map((a) => a.reason)).toEqual(["e2e: 8081 retired"]);
  expect(done.filter((a) => a.action === "director.unassign_pool").map((a) => a.reason)).toEqual([
    "e2e: site closes",
  ]);

  // The director serves nothing now: removing it breaks nothing and needs no reason; then the pool.
  expect((await page.request.delete(`/api/v1/directors/${director.id}`)).status()).toBe(200);
  expect((await page.request.delete(`/api/v1/pools/${pool.id}`)).status()).toBe(200);
});
