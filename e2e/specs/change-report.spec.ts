import type { APIRequestContext, Locator, Page } from "@playwright/test";
import { expect, signIn, test } from "../support/fixtures";
import { createHostToken, dataPlane, hello, observation } from "../support/host-samples";
import { checkPage, WIDTHS, watchConsoleErrors } from "../support/page-checks";

/**
 * A change's report in the console (issue 26 item 2): a drain writes a table version whose change
 * report the versions page shows as a badge per row ("measuring since …", then "closing…", then the
 * verdict) and, for the selected version, as a panel with the preview's prediction beside what was
 * measured; the audit event of the drain carries the same badge. The page is never reloaded: the
 * badge and the panel must move on by themselves while the report is not done.
 *
 * No lab here, so no tide-redirect reports flows: the report really ends "unknown" (each proxy
 * named with its reason). With no director the window ends 20 s after the change and the report
 * waits 15 s more for readings (packages/api/src/services/transitions/change-report.plan.ts), ~40 s in all.
 * The drained proxy's agent is a stand-in that reports 7 established connections, so the preview
 * predicts "0 broken, 7 by second chance"; its batch also starts the console's reporter (started
 * by the first agent batch a console process receives). The spec makes its own pool (3 proxies,
 * no director) and host under names unique to this run.
 */
const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
const ESTABLISHED = 7;
/** The window (20 s) + the catch-up wait (15 s) + the reporter's step (2 s) and a poll (3 s), with room. */
const REPORT_DONE_TIMEOUT_MS = 60_000;

async function post(api: APIRequestContext, url: string, data: unknown) {
  const res = await api.post(url, { data });
  expect(res.status(), `POST ${url}: ${await res.text()}`).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
}

const versionRow = (page: Page, version: number): Locator =>
  page.locator(`[data-testid="version-row"][data-version="${version}"]`);

test("a drain's change report: badge and panel from measuring to its verdict, and in the audit log", async ({
  page,
}, testInfo) => {
  test.setTimeout(150_000);
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page);
  const api = page.request;
  const net = `198.18.${Math.floor(Math.random() * 250)}`;
  const vip = `${net}.10`;
  const pool = (await post(api, "/api/v1/pools", {
    name: `e2e-report-${run}`,
    binds: [{ address: vip, proto: "tcp", portStart: 443 }],
  })) as { id: string };
  const hostnames = [1, 2, 3].map((i) => `proxy-report-0${i}.${run}.example.net`);
  const proxyIds: string[] = [];
  for (const [i, hostname] of hostnames.entries())
    proxyIds.push(
      (
        (await post(api, `/api/v1/pools/${pool.id}/proxies`, { address: `${net}.${21 + i}`, hostname })) as {
          id: string;
        }
      ).id,
    );
  const target = hostnames[0]!;
  const short = target.split(".")[0]!;

  // The drained proxy's agent: one fresh reading with its established connections to the VIP.
  const token = await createHostToken(page, target);
  await hello(api, token, target);
  const o = observation({ hostname: target, t: 0, at: new Date(), overflowPerS: 0 });
  (o.namespaces[1] as Record<string, unknown>).established = [
    { address: vip, port: 443, count: ESTABLISHED },
  ];
  const batch = await api.post("/api/v1/agent/observations", {
    headers: { authorization: `Bearer ${token}` },
    data: { observations: [o], dataPlane, replayed: false },
  });
  expect(batch.status(), await batch.text()).toBe(200);

  const drained = (await post(api, `/api/v1/proxies/${proxyIds[0]}/drain`, {
    reason: `e2e report ${run}`,
  })) as {
    tableVersion: { id: string; version: number };
  };
  const version = drained.tableVersion.version;

  const errors = watchConsoleErrors(page);
  await page.goto(`/pools/${pool.id}/versions`);
  const badge = versionRow(page, version).getByTestId("change-report-badge");
  const panel = page.getByTestId("change-report");
  const verdict = panel.getByTestId("change-report-verdict");

  await test.step("measuring: the new version's badge and, selected by default, its panel", async () => {
    await expect(badge).toHaveAttribute("data-status", "measuring");
    await expect(badge).toHaveText(/^measuring since \d\d:\d\d:\d\d$/);
    await expect(versionRow(page, version)).toHaveAttribute("aria-selected", "true");
    await expect(panel).toHaveAttribute("data-status", "measuring");
    await expect(panel.getByRole("heading", { name: `Connections · v${version}` })).toBeVisible();
    await expect(verdict).toHaveAttribute("data-verdict", "measuring");
    await expect(verdict).toHaveText(/^Measuring since \d\d:\d\d:\d\d UTC$/);
    await expect(panel.getByTestId("change-report-predicted").getByRole("listitem")).toHaveText([
      "predicted 0 broken, not measured yet",
      `predicted ${ESTABLISHED} by second chance, not measured yet`,
    ]);
    // Every version the pool wrote since reports exist has one: none shows "—".
    const all = page.getByTestId("version-row");
    await expect(page.getByTestId("change-report-badge")).toHaveCount(await all.count());
    await expect(page.locator('[data-testid="change-report-badge"][data-status="none"]')).toHaveCount(0);
  });

  await test.step("closing, then done: the page moves on without a reload", async () => {
    await expect(badge).toHaveAttribute("data-status", "closing", { timeout: REPORT_DONE_TIMEOUT_MS });
    await expect(badge).toHaveText("closing…");
    await expect(verdict).toHaveAttribute("data-verdict", "closing");
    await expect(badge).toHaveAttribute("data-status", "done", { timeout: REPORT_DONE_TIMEOUT_MS });
  });

  await test.step("unknown: no proxy reported flows, each one named with why", async () => {
    await expect(badge).toHaveAttribute("data-verdict", "unknown");
    await expect(badge).toHaveText("unknown");
    await expect(badge).toHaveAttribute("title", /^Not known: proxy-report-01, /);
    await expect(panel).toHaveAttribute("data-status", "done");
    await expect(verdict).toHaveAttribute("data-verdict", "unknown");
    // One cause, said once, for the three proxies.
    await expect(verdict).toHaveText(
      `Not known: ${hostnames.map((h) => h.split(".")[0]).join(", ")}: ` +
        "its agent or tide-redirect does not report flows",
    );
    await expect(panel.getByTestId("change-report-window")).toContainText(
      "(no director serves the pool; measured for 20 s)",
    );
    await expect(panel.getByTestId("change-report-proxy")).toHaveCount(3);
    await expect(
      panel.locator(`[data-testid="change-report-proxy"][data-hostname="${target}"]`),
    ).toContainText(`${short}: not reported: its agent or tide-redirect does not report flows`);
    await expect(panel.getByTestId("change-report-counts")).toHaveText(
      "second chance 0 · alternate hash 0 · last resort (broken) 0",
    );
    await expect(panel.getByTestId("change-report-predicted").getByRole("listitem")).toHaveText([
      "predicted 0 broken, measured: not known",
      `predicted ${ESTABLISHED} by second chance, measured 0`,
    ]);
    // No flow was seen, so no list of named flows.
    await expect(panel.locator('[data-testid^="change-report-flows-"]')).toHaveCount(0);
  });

  await test.step("the panel wraps at every width", async () => {
    for (const size of [...WIDTHS].reverse()) {
      await page.setViewportSize({ width: size.width, height: size.height });
      await expect(panel).toBeVisible();
      await checkPage(page, testInfo, "versions-change-report", errors);
      await panel.screenshot({ path: testInfo.outputPath(`change-report-panel-${size.width}.png`) });
    }
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  await test.step("the audit log: the drain's version link carries the same badge", async () => {
    await page.goto(`/audit?pool=${pool.id}`);
    const row = page.locator('[data-testid="audit-row"][data-action="proxy.drain"][data-outcome="done"]');
    await expect(row).toHaveCount(1);
    await expect(row.getByRole("link", { name: `v${version}` })).toBeVisible();
    const auditBadge = row.getByTestId("change-report-badge");
    await expect(auditBadge).toHaveAttribute("data-status", "done");
    await expect(auditBadge).toHaveAttribute("data-verdict", "unknown");
    await expect(auditBadge).toHaveText("unknown");
  });
});
