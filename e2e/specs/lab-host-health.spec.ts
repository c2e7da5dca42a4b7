import type { Page } from "@playwright/test";
import { acceptQueue, createPmtuGateway, pmtuBlackhole } from "@tide/lab/incidents";
import { requireRoot, startAgent, type RunningAgent } from "../support/agent";
import { expect, signIn, test } from "../support/fixtures";

/**
 * Kernel health against the lab with the real agent (root): packages/lab incidents in network
 * namespaces, the built tide-agent (with tide-probes) in the root namespace reporting to the e2e
 * console, and Chromium on the host page and the Findings page. Nothing here posts observations:
 * what the browser shows comes from the kernel through the agent.
 *
 * Waits are on the UI only (findings may be evaluated asynchronously after ingest, the live route
 * may change how it listens): never on timing. Cleanup runs in afterEach, also after a timeout.
 */

const cleanups: (() => Promise<void>)[] = [];
test.afterEach(async () => {
  const errors: unknown[] = [];
  for (const c of cleanups.splice(0).reverse()) {
    await c().catch((e: unknown) => errors.push(e));
  }
  if (errors.length > 0) throw new Error(`lab e2e cleanup: ${errors.map(String).join("; ")}`);
});

async function agentFor(page: Page, baseURL: string, prefix: string, pmtuTargets: string[] = []) {
  const hostname = `e2e-lab-${prefix}-${Date.now().toString(36)}`;
  const agent = await startAgent({ request: page.request, baseURL, hostname, pmtuTargets });
  cleanups.push(() => agent.stop());
  return agent;
}

/** Findings of the host (the page's own filter link), reloaded until `kind` is there. */
async function findingOnFindingsPage(page: Page, hostname: string, kind: string, agent: RunningAgent) {
  await page.goto(`/hosts/${hostname}`);
  const href = await page.getByRole("link", { name: "all findings of this host" }).getAttribute("href");
  expect(href).toMatch(/^\/findings\?host=/);
  const finding = page.locator(`[data-testid="finding"][data-kind="${kind}"]`);
  await expect(
    async () => {
      await page.goto(href!);
      await expect(finding.first()).toBeVisible({ timeout: 2_000 });
    },
    `a ${kind} finding for ${hostname}; agent output:\n${agent.output().slice(-2000)}`,
  ).toPass({
    timeout: 90_000,
    intervals: [1_000, 2_000],
  });
  return finding;
}

test("an accept queue overflow in a lab namespace shows live on the host page and as a finding", async ({
  page,
  baseURL,
}, testInfo) => {
  test.setTimeout(240_000);
  requireRoot();
  await signIn(page);
  const agent = await agentFor(page, baseURL!, "aq");

  await page.goto(`/hosts/${agent.hostname}`);
  await expect(page.getByTestId("host-name")).toHaveText(agent.hostname, { timeout: 30_000 });
  await expect(page.getByTestId("live-state")).toHaveAttribute("data-state", "live");
  // tide-probes must watch listen() before the incident's server calls it, or nothing says LIMITED.
  await expect(page.getByTestId("probe-row").filter({ hasText: "listen_capped" })).toHaveAttribute(
    "data-state",
    "on",
    { timeout: 30_000 },
  );

  const incident = await acceptQueue.setup({ requestedBacklog: 1024, somaxconn: 10, acceptIntervalMs: 500 });
  cleanups.push(() => incident.teardown());
  const serverNs = incident.namespaces.server.name;
  const ns = page.locator(`[data-testid="namespace"][data-ns="name:${serverNs}"]`);
  const listener = ns.locator(`[data-testid="listener-row"][data-port="${incident.port}"]`);
  const chart = ns.locator('[data-testid="counter-chart"][data-counter="TcpExtListenOverflows"]');

  await test.step("the incident's namespace and its capped listener appear without a reload", async () => {
    await page.evaluate(() => {
      (window as unknown as { tideMarker: string }).tideMarker = "same-document";
    });
    await expect(ns).toBeVisible({ timeout: 30_000 });
    await expect(listener).toHaveAttribute("data-limited", "true");
    await expect(listener.getByTestId("flag-limited")).toBeVisible();
    await expect(listener).toHaveAttribute("data-overflowing", "false");
    // the 1-minute findings window needs some seconds of samples of this namespace before the burst
    await expect
      .poll(async () => Number(await chart.getAttribute("data-points")), { timeout: 60_000 })
      .toBeGreaterThanOrEqual(12);
    await expect(chart).toHaveAttribute("data-latest", "0");
  });

  await test.step("a burst overflows the queue: flag and chart change live", async () => {
    const pointsBefore = Number(await chart.getAttribute("data-points"));
    // The burst holds its connections for 8 s: the queue stays full (Recv-Q > Send-Q) meanwhile.
    const burst = incident.trigger({ count: 300, durationMs: 8_000 });
    try {
      await expect(listener).toHaveAttribute("data-overflowing", "true", { timeout: 20_000 });
      await expect(listener.getByTestId("flag-overflowing")).toBeVisible();
      await expect
        .poll(async () => Number((await chart.getAttribute("data-latest")) || 0), { timeout: 20_000 })
        .toBeGreaterThan(0);
      await expect(chart.getByTestId("counter-latest")).not.toHaveText("0/s");
      expect(Number(await chart.getAttribute("data-points"))).toBeGreaterThan(pointsBefore);
      await page.screenshot({ path: testInfo.outputPath("host-page-overflow.png"), fullPage: true });
    } finally {
      const result = await burst;
      console.log(`[lab e2e] burst ${JSON.stringify(result)}`);
    }
    expect(await page.evaluate(() => (window as unknown as { tideMarker?: string }).tideMarker)).toBe(
      "same-document",
    );
  });

  await test.step("the host page lists the open finding (pushed, no reload)", async () => {
    await expect(
      page
        .getByTestId("host-findings")
        .locator('[data-testid="finding"][data-kind="accept_queue_overflow"]')
        .first(),
    ).toBeVisible({ timeout: 90_000 });
    expect(await page.evaluate(() => (window as unknown as { tideMarker?: string }).tideMarker)).toBe(
      "same-document",
    );
  });

  await test.step("the Findings page shows accept_queue_overflow for the namespace", async () => {
    const finding = await findingOnFindingsPage(page, agent.hostname, "accept_queue_overflow", agent);
    const ours = finding.filter({ has: page.getByTestId("finding-subject").filter({ hasText: serverNs }) });
    await expect(ours.first()).toBeVisible();
    await expect(ours.first()).toHaveAttribute("data-status", "open");
    await expect(ours.first().getByTestId("finding-evidence")).toContainText("TcpExtListenOverflows");
    // Attributed to the port when a sample or the probe saw it; a namespace-wide finding names none.
    for (const subject of await ours.getByTestId("finding-subject").allTextContents()) {
      const port = /port (\d+)/.exec(subject)?.[1];
      if (port !== undefined) expect(Number(port)).toBe(incident.port);
    }
    await page.screenshot({ path: testInfo.outputPath("findings-page-overflow.png"), fullPage: true });
  });
});

test("a PMTU blackhole on the lab path shows on the host page and as a finding", async ({
  page,
  baseURL,
}, testInfo) => {
  test.setTimeout(240_000);
  requireRoot();
  await signIn(page);

  // Root's way into the incident (the agent checks paths from its own namespace), as a host has.
  const gateway = await createPmtuGateway();
  cleanups.push(() => gateway.remove());
  const pmtu = await pmtuBlackhole.setup();
  cleanups.push(() => pmtu.teardown());
  await pmtu.trigger();
  await gateway.attach(pmtu, 1500);
  const target = pmtu.namespaces.server.address;
  await gateway.routeTarget(target);
  const agent = await agentFor(page, baseURL!, "pm", [target]);

  await test.step("the host page's path MTU table shows the target as a blackhole", async () => {
    await page.goto(`/hosts/${agent.hostname}`);
    await expect(page.getByTestId("host-name")).toHaveText(agent.hostname, { timeout: 30_000 });
    const row = page.getByTestId("path-row").filter({ hasText: target });
    // The first check starts about 5 s after the agent; tracepath over a silent hop takes a while.
    await expect(row, `agent output:\n${agent.output().slice(-2000)}`).toHaveAttribute(
      "data-blackhole",
      "true",
      {
        timeout: 90_000,
      },
    );
    await expect(row).toContainText("BLACKHOLE");
    await page.screenshot({ path: testInfo.outputPath("host-page-pmtu.png"), fullPage: true });
  });

  await test.step("the Findings page shows the pmtu_blackhole finding for the path", async () => {
    const finding = await findingOnFindingsPage(page, agent.hostname, "pmtu_blackhole", agent);
    await expect(finding).toHaveCount(1);
    await expect(finding.getByTestId("finding-subject")).toContainText(`path ${target}`);
    await expect(finding).toHaveAttribute("data-status", "open");
    await page.screenshot({ path: testInfo.outputPath("findings-page-pmtu.png"), fullPage: true });
  });
});
