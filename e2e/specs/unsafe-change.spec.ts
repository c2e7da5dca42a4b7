import type { APIRequestContext, Locator, Page } from "@playwright/test";
import { expect, signIn, test } from "../support/fixtures";
import { createHostToken, dataPlane, hello, observation } from "../support/host-samples";

/**
 * A deliberate unsafe change, predicted before Confirm (issue 26 item 2): a proxy whose agent
 * reports 23 established connections to the pool's VIP is drained (the preview says 0 break and
 * all 23 reach it by second chance), then deactivated with them still there: the dialog says
 * exactly 23 break, Confirm waits for a reason (the API refuses the change without one), and the
 * audit event keeps the reason. The proxy's agent is a stand-in that posts a reading every second.
 * The spec makes its own pool (3 proxies, no director) and host under names unique to this run.
 */
const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
const ESTABLISHED = 23;

async function call(api: APIRequestContext, method: "post", url: string, data: unknown) {
  const res = await api[method](url, { data });
  expect(res.status(), `${method.toUpperCase()} ${url}: ${await res.text()}`).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
}

const proxyRow = (page: Page, hostname: string): Locator =>
  page.locator(`[data-testid="proxy-row"][data-hostname="${hostname}"]`);

/**
 * A stand-in agent for `hostname`: one reading a second, `count` ESTABLISHED connections to
 * vip:443 in its "web" namespace, until stopped.
 */
function reportEstablished(
  request: APIRequestContext,
  token: string,
  hostname: string,
  vip: string,
  count: number,
): { stop: () => Promise<void> } {
  let t = 0;
  let stopped = false;
  const post = async () => {
    const o = observation({ hostname, t, at: new Date(), overflowPerS: 0 });
    t++;
    (o.namespaces[1] as Record<string, unknown>).established = [{ address: vip, port: 443, count }];
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

test("deactivate with connections left: the exact count is predicted and a reason is required", async ({
  page,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page);
  const net = `198.18.${Math.floor(Math.random() * 250)}`;
  const vip = `${net}.10`;
  const pool = (await call(page.request, "post", "/api/v1/pools", {
    name: `e2e-unsafe-${run}`,
    binds: [{ address: vip, proto: "tcp", portStart: 443 }],
  })) as { id: string };
  const hostnames = [1, 2, 3].map((i) => `proxy-unsafe-0${i}.${run}.example.net`);
  for (const [i, hostname] of hostnames.entries())
    await call(page.request, "post", `/api/v1/pools/${pool.id}/proxies`, {
      address: `${net}.${21 + i}`,
      hostname,
    });
  const detail = (await (await page.request.get(`/api/v1/pools/${pool.id}`)).json()) as {
    proxies: { id: string; hostname: string }[];
  };
  const target = detail.proxies.find((p) => p.hostname === hostnames[2])!;
  const short = target.hostname.split(".")[0]!;

  const token = await createHostToken(page, target.hostname);
  await hello(page.request, token, target.hostname);
  const agent = reportEstablished(page.request, token, target.hostname, vip, ESTABLISHED);
  try {
    await page.goto(`/pools/${pool.id}`);
    await expect(proxyRow(page, target.hostname).getByTestId("traffic-established")).toHaveAttribute(
      "data-value",
      String(ESTABLISHED),
      { timeout: 15_000 },
    );
    const dialog = page.getByTestId("preview-dialog");
    const confirm = dialog.getByTestId("confirm-transition");

    await test.step("drain: 0 break, every one of its connections reaches it by second chance", async () => {
      await proxyRow(page, target.hostname).getByTestId("action-drain").click();
      const impact = dialog.getByTestId("preview-impact-summary");
      await expect(impact).toHaveText(
        `0 connections break; ${ESTABLISHED} reach their proxy by second chance.`,
      );
      await expect(impact).toHaveAttribute("data-broken", "0");
      await expect(dialog.getByTestId("preview-breaks")).toHaveCount(0);
      await dialog.getByTestId("transition-reason").fill("e2e kernel upgrade");
      await confirm.click();
      await expect(dialog.getByTestId("transition-result")).toContainText("is now");
      await dialog.getByTestId("close-dialog").click();
      await expect(proxyRow(page, target.hostname)).toHaveAttribute("data-state", "draining");
    });

    await test.step("the API refuses the break without a reason", async () => {
      const res = await page.request.post(`/api/v1/proxies/${target.id}/deactivate`, { data: {} });
      expect(res.status()).toBe(422);
      expect(((await res.json()) as { message: string }).message).toContain(
        `break ${ESTABLISHED} established connections (${ESTABLISHED} on ${target.hostname})`,
      );
    });

    await test.step("deactivate: exactly the count breaks, and Confirm waits for a reason", async () => {
      await proxyRow(page, target.hostname).getByTestId("action-deactivate").click();
      const breaks = dialog.getByTestId("preview-breaks");
      await expect(breaks).toHaveAttribute("data-count", String(ESTABLISHED));
      await expect(breaks).toHaveText(
        `${ESTABLISHED} established connections on ${short} break: they have no hop left once it leaves the table.`,
      );
      await expect(breaks).toHaveAttribute("role", "alert");
      await expect(dialog.getByTestId("preview-impact-summary")).toHaveText(
        `${ESTABLISHED} connections break; 0 reach their proxy by second chance.`,
      );
      await expect(confirm).toBeDisabled();
      await expect(confirm).toHaveAttribute("title", "give a reason first");
      await dialog.getByTestId("transition-reason").fill("e2e host is being replaced");
      await expect(confirm).toBeEnabled();
      await confirm.click();
      await expect(dialog.getByTestId("transition-result")).toContainText("is now");
      await dialog.getByTestId("close-dialog").click();
      await expect(proxyRow(page, target.hostname)).toHaveAttribute("data-state", "inactive");
    });
  } finally {
    await agent.stop();
  }

  const audit = (await (await page.request.get(`/api/v1/audit?poolId=${pool.id}&limit=20`)).json()) as {
    items: { action: string; reason: string; outcome: string }[];
  };
  expect(
    audit.items.filter((a) => a.action === "proxy.deactivate" && a.outcome === "done").map((a) => a.reason),
  ).toEqual(["e2e host is being replaced"]);
});
