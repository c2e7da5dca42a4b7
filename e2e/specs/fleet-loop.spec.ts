import type { Locator, Page } from "@playwright/test";
import { spawnSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import {
  CONSOLE_POOL_NAME,
  down,
  labHosts,
  stopProcess,
  summarizeConnections,
  up,
  vipRouteArgv,
  type ClientDriver,
  type ConnectionReport,
  type Lab,
} from "@tide/lab";
import { ensureAgentBuild, requireRoot } from "../support/agent";
import { expect, openPool, signIn, test } from "../support/fixtures";

/**
 * The whole loop on the lab (root): the lab registers itself with the e2e console over REST and runs
 * one real tide-agent per director and proxy; the console owns the tables. In Chromium an operator
 * drains, deactivates, fills and activates a proxy while 120 long-lived streams run through the
 * directors; each change is shown served by both directors, new connections avoid the drained
 * proxy, the drained proxy's established count (from its agent) falls to zero live before Set
 * inactive says nothing is left to cut, and no stream is reset or loses a byte. With health checks
 * on, a proxy whose HTTP server stops turns unhealthy on the pool page live, as both directors see it.
 * Hash fields changed in the browser with 100 streams running migrate: no stream breaks, the pool
 * page shows the packets still taking the old fields, and the migration is finished. A director
 * killed and started with no table is
 * shown out of sync and then, with nobody doing anything, in sync again. A pool made in the browser
 * for a new VIP carries real flows, and the console's explain names the proxy that served each.
 *
 * The lab's namespaces, processes and agents are this spec's; afterAll removes them.
 */

test.describe.configure({ mode: "serial" });

/** Its own namespace prefix and state directory: never the lab of a developer's `npm run up`. */
const PREFIX = "tide-floop";

let lab: Lab | null = null;
let driver: ClientDriver | null = null;

test.afterAll(async () => {
  await driver?.stop().catch(() => undefined);
  driver = null;
  await lab?.down().catch(() => undefined);
  lab = null;
  await down({ prefix: PREFIX }).catch(() => undefined);
});

/** A fresh admin API token for the lab's registration, made as the signed-in e2e admin. */
async function apiToken(page: Page): Promise<string> {
  const res = await page.request.post("/api/v1/tokens", {
    data: { name: `e2e-lab-${Date.now().toString(36)}`, scopes: ["read", "operate", "admin"] },
  });
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

const proxyRow = (page: Page, hostname: string): Locator =>
  page.locator(`[data-testid="proxy-row"][data-hostname="${hostname}"]`);

/**
 * Applies `action` to `hostname` in the browser (preview, confirm) and waits in the same dialog until
 * the new version is served by every director ("served by 2/2"); returns the version.
 */
async function actInBrowser(
  page: Page,
  hostname: string,
  action: string,
  before?: (dialog: Locator) => Promise<void>,
): Promise<number> {
  await proxyRow(page, hostname).getByTestId(`action-${action}`).click();
  const dialog = page.getByTestId("preview-dialog");
  await before?.(dialog);
  await expect(dialog.getByTestId("preview-refusal")).toHaveCount(0);
  // Drain and deactivate need a reason before Confirm is enabled.
  await dialog.getByTestId("transition-reason").fill(`e2e fleet loop: ${action}`);
  await expect(dialog.getByTestId("confirm-transition")).toBeEnabled();
  await dialog.getByTestId("confirm-transition").click();
  const result = dialog.getByTestId("transition-result");
  await expect(result).toBeVisible();
  const version = Number(await result.getAttribute("data-version"));
  const servedBy = dialog.getByTestId("served-by");
  await expect(servedBy).toHaveAttribute("data-version", String(version));
  await expect(servedBy).toHaveAttribute("data-of", "2");
  await expect(servedBy).toHaveAttribute("data-done", "true", { timeout: 10_000 });
  await expect(servedBy).toHaveAttribute("data-served", "2");
  await dialog.getByTestId("close-dialog").click();
  await expect(dialog).toBeHidden();
  return version;
}

/** Every stream open, without error, and echoing lately. */
function expectStreaming(reports: ConnectionReport[]) {
  for (const c of reports) {
    expect(c.error, JSON.stringify(c)).toBeNull();
    expect(c.state, JSON.stringify(c)).toBe("open");
    expect(c.lastEchoAgoMs ?? Infinity, JSON.stringify(c)).toBeLessThan(2_000);
  }
}

test("drain, deactivate, fill and activate a proxy in the browser: both directors follow, no stream breaks", async ({
  page,
  baseURL,
}) => {
  test.setTimeout(420_000);
  requireRoot();
  ensureAgentBuild();
  await signIn(page);
  const token = await apiToken(page);
  lab = await up({
    prefix: PREFIX,
    fresh: true,
    redirect: true,
    console: { url: baseURL!, token, tokenFile: null },
    log: (line) => console.log(`[lab] ${line}`),
  });
  driver = await lab.clientDriver();
  const hosts = labHosts(lab.topology);
  const hostnameOf = new Map(hosts.map((h) => [h.name, h.hostname]));

  await openPool(page, CONSOLE_POOL_NAME);
  await expect(page.getByTestId("served-by")).toHaveAttribute("data-done", "true");
  await expect(page.getByTestId("served-by")).toHaveAttribute("data-of", "2");

  // 120 long-lived streams, data both ways, spread over the three proxies.
  const first = await driver.open(120, { intervalMs: 100 });
  expect(summarizeConnections(first).byState).toEqual({ open: 120 });
  const byProxy = summarizeConnections(first).byProxy;
  expect(Object.keys(byProxy).sort()).toEqual(lab.proxies.slice().sort());
  // Drain the proxy holding the most streams: the most to lose.
  const drained = Object.entries(byProxy).sort((a, b) => b[1] - a[1])[0]![0];
  const drainedHost = hostnameOf.get(drained)!;
  const onDrained = first.filter((c) => c.proxy === drained).map((c) => c.id);

  await test.step(`drain ${drainedHost}: both directors serve it, new streams avoid it, old ones keep streaming`, async () => {
    await actInBrowser(page, drainedHost, "drain");
    await expect(proxyRow(page, drainedHost)).toHaveAttribute("data-state", "draining");
    const fresh = await driver!.open(40, { intervalMs: 100 });
    expect(summarizeConnections(fresh).byState).toEqual({ open: 40 });
    expect(summarizeConnections(fresh).byProxy[drained] ?? 0).toBe(0);
    const echoed = new Map((await driver!.report(onDrained)).map((c) => [c.id, c.echoed]));
    await sleep(2_000);
    for (const c of await driver!.report(onDrained))
      expect(c.echoed, JSON.stringify(c)).toBeGreaterThan(echoed.get(c.id)!);
    expectStreaming(await driver!.report());
    // The pool page shows, pushed from the proxy's agent, how many streams the drained proxy holds.
    await expect(proxyRow(page, drainedHost).getByTestId("traffic-established")).toHaveAttribute(
      "data-value",
      String(onDrained.length),
      { timeout: 15_000 },
    );
  });

  await test.step("its streams end gracefully; deactivate, fill and activate with every other stream up", async () => {
    const closed = await driver!.close({ ids: onDrained });
    expect(summarizeConnections(closed).byState).toEqual({ closed: onDrained.length });
    expect(summarizeConnections(closed).errors).toEqual({});
    // Its established count falls to zero live, and Deactivate says nothing is left to cut.
    await expect(proxyRow(page, drainedHost).getByTestId("traffic-established")).toHaveAttribute(
      "data-value",
      "0",
      { timeout: 15_000 },
    );
    await actInBrowser(page, drainedHost, "deactivate", async (dialog) => {
      await expect(dialog.getByTestId("remaining-connections")).toHaveAttribute("data-drained", "true");
      await expect(dialog.getByTestId("remaining-connections")).toHaveText(
        "0 established: every connection to the VIPs has ended",
      );
    });
    await expect(proxyRow(page, drainedHost)).toHaveAttribute("data-state", "inactive");
    for (const [action, state] of [
      ["fill", "filling"],
      ["activate", "active"],
    ] as const) {
      await actInBrowser(page, drainedHost, action);
      await expect(proxyRow(page, drainedHost)).toHaveAttribute("data-state", state);
      await sleep(1_000);
      expectStreaming(await driver!.report());
    }
    const back = await driver!.open(30, { intervalMs: 100 });
    expect(summarizeConnections(back).byState).toEqual({ open: 30 });
    expect(summarizeConnections(back).byProxy[drained] ?? 0).toBeGreaterThan(0);
  });

  await test.step("every stream closes cleanly with every byte echoed: 0 resets", async () => {
    const all = await driver!.close();
    const s = summarizeConnections(all);
    console.log(
      `[fleet loop] streams ${s.total}, closed ${s.byState.closed ?? 0}, errors ${JSON.stringify(s.errors)}, ` +
        `sent ${s.sent} B, echoed ${s.echoed} B`,
    );
    expect(s.errors).toEqual({});
    // close() forgets what it closed: the drained proxy's streams were counted when they ended.
    expect(s.byState).toEqual({ closed: 190 - onDrained.length });
    expect(s.echoed).toBe(s.sent);
    for (const c of all) expect(c.echoed, JSON.stringify(c)).toBe(c.sent);
  });
});

test("hash fields changed in the browser with 100 streams: 0 resets, the migration shown, then finished", async ({
  page,
}) => {
  test.setTimeout(360_000);
  requireRoot();
  if (!lab || !driver) throw new Error("the lab of the first test is not running");
  await signIn(page);
  const streams = await driver!.open(100, { intervalMs: 100 });
  expect(summarizeConnections(streams).byState).toEqual({ open: 100 });
  const ids = streams.map((c) => c.id);
  await openPool(page, CONSOLE_POOL_NAME);
  const poolUrl = page.url();

  await test.step("untick src_port: the preview says connections are kept; confirm", async () => {
    await page.getByTestId("pool-settings-link").click();
    const panel = page.getByTestId("hash-fields-change");
    await expect(panel.getByTestId("current-hash-fields")).toHaveText("src_addr, src_port");
    await panel.getByTestId("hash-field-src_port").uncheck();
    await panel.getByTestId("preview-hash-fields").click();
    await expect(panel.getByTestId("hash-preview-keeps")).toHaveAttribute("data-migrates", "true");
    await panel.getByTestId("hash-fields-reason").fill("e2e fleet loop: hash on the address only");
    await panel.getByTestId("confirm-hash-fields").click();
    await expect(panel.getByTestId("hash-fields-saved")).toContainText("Now hashing on src_addr");
  });

  await test.step("the pool page shows the migration and the packets still taking the old fields", async () => {
    await page.goto(poolUrl);
    await expect(page.getByTestId("served-by")).toHaveAttribute("data-done", "true", { timeout: 20_000 });
    const banner = page.getByTestId("hash-migration-banner");
    await expect(banner).toContainText("Hash fields migrating src_addr, src_port → src_addr");
    // Pushed from the proxies' agents: tide-redirect's accepted_alternate_hash on the pool's VIP.
    await expect(page.getByTestId("hash-migration-alternate")).toContainText(
      "packets/s through the old fields",
      {
        timeout: 20_000,
      },
    );
    await page.screenshot({ path: test.info().outputPath("hash-migration.png"), fullPage: true });
    await sleep(3_000);
    expectStreaming(await driver!.report(ids));
  });

  await test.step("the change's report: 0 connections broken, the flows kept by the old fields named", async () => {
    // The newest version (the hash change's) is selected by default; its report is written once
    // both directors have served it for 20 s and the proxies' readings cover the window.
    await page.goto(`${poolUrl}/versions`);
    const panel = page.getByTestId("change-report");
    const verdict = panel.getByTestId("change-report-verdict");
    await expect(verdict).toHaveAttribute("data-verdict", "none_broken", { timeout: 120_000 });
    await expect(verdict).toHaveText("0 connections broken");
    const kept = panel.getByTestId("change-report-flows-alternateHash");
    await kept.locator("summary").click();
    // Named flows: this lab's client, to the VIP, each on the proxy that holds it.
    await expect(kept.getByRole("listitem").first()).toContainText(`→ ${lab!.vip}:`);
    expect(await kept.getByRole("listitem").count()).toBeGreaterThan(0);
    await page.screenshot({ path: test.info().outputPath("hash-change-report.png"), fullPage: true });
    expectStreaming(await driver!.report(ids));
    await page.goto(poolUrl);
  });

  await test.step("the streams end with every byte echoed; the migration is finished", async () => {
    const s = summarizeConnections(await driver!.close({ ids }));
    expect(s.errors).toEqual({});
    expect(s.byState).toEqual({ closed: 100 });
    expect(s.echoed).toBe(s.sent);
    const alternate = page.getByTestId("hash-migration-alternate");
    const banner = page.getByTestId("hash-migration-banner");
    // With no stream left, nothing takes the old fields (or the console already finished it).
    await expect(async () => {
      if ((await banner.count()) === 0) return;
      await expect(alternate).toContainText("No established flow reaches its proxy through the old fields");
    }).toPass({ timeout: 20_000 });
    if ((await banner.count()) > 0) {
      await page.getByTestId("finish-hash-migration").click();
      await page.getByTestId("confirm-finish-hash-migration").click();
    }
    await expect(banner).toHaveCount(0);
    await expect(page.getByTestId("served-by")).toHaveAttribute("data-done", "true", { timeout: 20_000 });
  });
});

test("a director killed and started with no table is shown out of sync, then repaired by its agent", async ({
  page,
}) => {
  test.setTimeout(180_000);
  requireRoot();
  if (!lab) throw new Error("the lab of the previous test is not running");
  await signIn(page);
  const director = lab.topology.directors[0]!.name;
  const hostname = labHosts(lab.topology).find((h) => h.name === director)!.hostname;
  await page.goto("/");
  const row = page.locator(`[data-testid="director-row"][data-hostname="${hostname}"]`);
  await expect(row).toHaveAttribute("data-state", "in_sync");

  await lab.stopDirector(director);
  await expect(row).toHaveAttribute("data-state", "out_of_sync", { timeout: 15_000 });
  await expect(row.getByTestId("director-pool")).toHaveAttribute("data-state", "not_served");
  await expect(page.getByTestId("fleet-alarm")).toContainText(hostname);

  const restarted = Date.now();
  await lab.startDirector(director); // console mode: no table; nobody touches the console or the agent
  await expect(row).toHaveAttribute("data-state", "in_sync", { timeout: 15_000 });
  console.log(`[fleet loop] director restart -> shown in sync in the browser: ${Date.now() - restarted} ms`);
  await expect(page.getByTestId("fleet-alarm")).toHaveCount(0, { timeout: 10_000 });
  const served = await lab.consoleSync();
  expect(served?.inSync).toBe(true);
});

test("a pool made in the browser for a new VIP carries traffic, and explain names the proxy that served each flow", async ({
  page,
}) => {
  test.setTimeout(360_000);
  requireRoot();
  if (!lab || !driver) throw new Error("the lab of the first test is not running");
  const topology = lab.topology;
  const vip = "10.200.0.20";
  const poolName = `e2e-vip-${Date.now().toString(36)}`;
  const hosts = labHosts(topology);

  // The network side of a new VIP (what a datacenter's routers and proxies' configuration do): the
  // router sends it to both directors over ECMP, every proxy holds it on lo for direct server return.
  const ip = (...argv: string[]) => {
    const r = spawnSync(argv[0]!, argv.slice(1), { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${argv.join(" ")}: ${r.stderr}`);
  };
  const route = vipRouteArgv(
    { ...topology, vip },
    topology.directors.map((d) => d.name),
  );
  ip(...route);
  for (const p of topology.proxies) ip("ip", "-n", p.namespace, "addr", "add", `${vip}/32`, "dev", "lo");

  await signIn(page);
  let poolId = "";
  await test.step("create the pool in the browser: the VIP's stream port, hashed on address and port", async () => {
    await page.goto("/");
    await page.getByTestId("new-pool").click();
    const form = page.getByTestId("new-pool-form");
    await form.getByTestId("pool-name-input").fill(poolName);
    await form.getByTestId("hash-field-src_port").check();
    const row = form.getByTestId("bind-row").first();
    await row.getByTestId("bind-address").fill(vip);
    await row.getByTestId("bind-ports").fill(String(topology.ports.stream));
    await form.getByTestId("create-pool-submit").click();
    await expect(page.getByTestId("pool-name")).toHaveText(poolName);
    poolId = /\/pools\/(pool_[^/?#]+)/.exec(page.url())?.[1] ?? "";
    expect(poolId).not.toBe("");
  });

  await test.step("add the lab's three proxies", async () => {
    await page.getByTestId("open-add-proxy").click();
    const dialog = page.getByTestId("add-proxy-dialog");
    const proxies = hosts.filter((h) => h.role === "proxy");
    for (const [i, h] of proxies.entries()) {
      await dialog.getByTestId("proxy-address-input").fill(h.address!);
      await dialog.getByTestId("proxy-hostname-input").fill(h.hostname);
      await dialog.getByTestId("add-proxy-submit").click();
      await expect(dialog.getByTestId("added-proxy")).toHaveCount(i + 1);
    }
    await dialog.getByTestId("close-add-proxy").click();
    await expect(page.locator('[data-testid="proxy-row"][data-state="active"]')).toHaveCount(3);
  });

  await test.step("assign both lab directors; the pool page shows its table served by 2/2", async () => {
    await page.goto("/directors");
    for (const h of hosts.filter((x) => x.role === "director")) {
      const row = page.locator(`[data-testid="admin-director-row"][data-hostname="${h.hostname}"]`);
      await row.getByTestId("assign-pool-select").selectOption({ label: poolName });
      await row.getByTestId("assign-pool").click();
      await expect(row.locator(`[data-testid="served-pool"][data-pool-id="${poolId}"]`)).toBeVisible();
    }
    await page.goto(`/pools/${poolId}`);
    const servedBy = page.getByTestId("served-by");
    await expect(servedBy).toHaveAttribute("data-of", "2");
    await expect(servedBy).toHaveAttribute("data-done", "true", { timeout: 15_000 });
  });

  await test.step("20 real flows to the new VIP: the console's explain names the proxy that answered each", async () => {
    const flows = await driver!.open(20, { host: vip, port: topology.ports.stream, intervalMs: 200 });
    expect(summarizeConnections(flows).byState).toEqual({ open: 20 });
    const pool = (await (await page.request.get(`/api/v1/pools/${poolId}`)).json()) as {
      currentVersion: { id: string };
    };
    const client = topology.client.address.split("/")[0]!;
    const proxyOfHost = new Map(hosts.map((h) => [h.hostname, h.name]));
    const answered = new Set<string>();
    for (const c of flows) {
      const res = await page.request.get(`/api/v1/tables/${pool.currentVersion.id}/explain`, {
        params: { srcAddr: client, srcPort: c.localPort!, dstAddr: vip, dstPort: topology.ports.stream },
      });
      expect(res.status(), await res.text()).toBe(200);
      const e = (await res.json()) as { primary: { hostname: string }; hashFields: string[] };
      expect(e.hashFields).toEqual(["src_addr", "src_port"]);
      expect(proxyOfHost.get(e.primary.hostname), JSON.stringify({ flow: c, explain: e })).toBe(c.proxy);
      answered.add(c.proxy!);
    }
    // Hashed on the port too: one client's 20 flows are spread, not all on one proxy.
    expect(answered.size).toBeGreaterThan(1);
    const closed = await driver!.close({ ids: flows.map((c) => c.id) });
    expect(summarizeConnections(closed).errors).toEqual({});
  });
});

test("health checks on the lab: a proxy whose HTTP server stops turns unhealthy live on the pool page, then back", async ({
  page,
}) => {
  test.setTimeout(180_000);
  requireRoot();
  if (!lab) throw new Error("the lab of the first test is not running");
  const theLab = lab;
  await signIn(page);
  const poolId = await openPool(page, CONSOLE_POOL_NAME);
  const settings = (enabled: boolean) => ({
    healthCheck: {
      enabled,
      intervalMs: 500,
      timeoutMs: 300,
      rise: 2,
      fall: 2,
      gue: true,
      service: { kind: "http", port: theLab.topology.ports.http, path: "/" },
    },
    reason: "e2e fleet loop: health checks",
  });
  const on = await page.request.put(`/api/v1/pools/${poolId}/health-check`, { data: settings(true) });
  expect(on.status(), await on.text()).toBe(200);
  const proxy = theLab.proxies[0]!;
  const hostname = labHosts(theLab.topology).find((h) => h.name === proxy)!.hostname;
  const row = page.locator(`[data-testid="proxy-health-row"][data-hostname="${hostname}"]`);
  const views = (up: boolean) => row.locator(`[data-testid="director-view"][data-up="${up}"]`);
  try {
    // Both directors check it from their own stacks and find it up: pushed to the page.
    await expect(views(true)).toHaveCount(2, { timeout: 20_000 });
    const server = theLab.stateSnapshot().processes.find((p) => p.key === `${proxy}.server`);
    if (!server) throw new Error(`no ${proxy}.server in the lab's state file`);
    const stopped = Date.now();
    await stopProcess(server);
    await expect(row).toHaveAttribute("data-healthy", "false", { timeout: 15_000 });
    console.log(`[fleet loop] HTTP server stopped -> unhealthy on the page: ${Date.now() - stopped} ms`);
    await expect(views(false)).toHaveCount(2);
    await expect(row.locator('[data-kind="http"][data-ok="false"]').first()).toContainText(
      "connection refused",
    );
    await expect(proxyRow(page, hostname).getByTestId("health")).toHaveAttribute("data-healthy", "false");
    await expect(page.getByTestId("served-by")).toHaveAttribute("data-done", "true", { timeout: 10_000 });

    await theLab.startTestServer(proxy);
    await expect(row).toHaveAttribute("data-healthy", "true", { timeout: 30_000 });
    await expect(proxyRow(page, hostname).getByTestId("health")).toHaveAttribute("data-healthy", "true");
  } finally {
    await page.request.put(`/api/v1/pools/${poolId}/health-check`, { data: settings(false) });
  }
});
