import type { Page } from "@playwright/test";
import { checkPage, panelSpill, watchConsoleErrors, WIDTHS } from "../support/page-checks";
import { expect, signIn, test } from "../support/fixtures";
import { TIDE_VERSION } from "../support/tide-version";

/**
 * Every page at a phone's and a laptop's width: no sideways page scroll, content kept inside its
 * panel (a wide table scrolls inside its panel instead), no console errors, no serious axe-core
 * violations, a screenshot of each kept. The list below is the table of pages; add a row for a new
 * page. Pages that need data make it themselves (a host with probe results, a token to revoke).
 */

interface PageCase {
  label: string;
  /** Look at the page signed out (the sign-in page). */
  signedOut?: boolean;
  /** Opens the page and waits until its content is there. */
  open: (page: Page) => Promise<void>;
  /** Console messages the page logs by design (each expected exactly once). */
  expectedErrors?: RegExp[];
}

const PAGES: PageCase[] = [
  {
    label: "fleet",
    open: async (page) => {
      await page.goto("/");
      await expect(page.getByTestId("pools-table")).toBeVisible();
      await expect(page.getByTestId("directors-table")).toBeVisible();
    },
  },
  {
    label: "hosts",
    open: async (page) => {
      await makeHost(page, "e2e-layout-list");
      await page.goto("/hosts");
      await expect(page.getByTestId("hosts-table")).toBeVisible();
    },
  },
  {
    label: "host",
    open: async (page) => {
      const hostname = await makeHost(page, "e2e-layout-host");
      await page.goto(`/hosts/${hostname}`);
      await expect(page.getByTestId("connect-latency").getByTestId("connect-row").first()).toBeVisible();
      await expect(page.getByTestId("paths-table")).toBeVisible();
      await expect(page.getByTestId("cpu-table")).toBeVisible();
    },
  },
  {
    label: "directors",
    open: async (page) => {
      await page.goto("/directors");
      await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    },
  },
  {
    label: "users",
    open: async (page) => {
      await page.goto("/settings/users");
      await expect(page.getByTestId("user-row").first()).toBeVisible();
    },
  },
  {
    label: "tokens",
    open: async (page) => {
      // A token of our own, with its revoke confirmation open: the widest state of the table.
      const name = `e2e-layout-${Date.now().toString(36)}`;
      const res = await page.request.post("/api/v1/tokens", { data: { name, scopes: ["read"] } });
      expect(res.status(), await res.text()).toBe(200);
      await page.goto("/settings/tokens");
      const row = page.getByTestId("token-row").filter({ hasText: name });
      await row.getByTestId("revoke-token").click();
      await expect(row.getByTestId("confirm-revoke")).toBeVisible();
    },
  },
  {
    label: "account",
    open: async (page) => {
      await page.goto("/settings/account");
      await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    },
  },
  {
    label: "api-docs",
    open: async (page) => {
      await page.goto("/docs");
      // Swagger UI renders every operation of /api/openapi.json before the first shows: on a busy
      // 2-core machine that took 21–38 s here (a wait, not a measure).
      await expect(page.getByTestId("api-docs").locator(".opblock").first()).toBeVisible({ timeout: 45_000 });
    },
  },
  {
    label: "sign-in",
    signedOut: true,
    open: async (page) => {
      await page.goto("/sign-in");
      await expect(page.getByTestId("sign-in-submit")).toBeVisible();
    },
  },
  {
    label: "not-found",
    // Chromium logs the document's own 404 status as an error: that status is the point.
    expectedErrors: [/^Failed to load resource: the server responded with a status of 404/],
    open: async (page) => {
      await page.goto("/no/such/page");
      await expect(page.getByTestId("not-found")).toBeVisible();
    },
  },
];

for (const size of WIDTHS) {
  test.describe(`pages at ${size.name} px`, () => {
    test.use({ viewport: { width: size.width, height: size.height } });

    for (const p of PAGES) {
      test(`${p.label} fits ${size.name} px, logs no errors and passes axe`, async ({ page }, testInfo) => {
        if (!p.signedOut) await signIn(page);
        const errors = watchConsoleErrors(page);
        await p.open(page);
        for (const expected of p.expectedErrors ?? []) {
          const at = errors.findIndex((e) => expected.test(e));
          expect(at, `${p.label}: expected console message ${expected}`).toBeGreaterThanOrEqual(0);
          errors.splice(at, 1);
        }
        await checkPage(page, testInfo, p.label, errors);
        const { scrolling } = await panelSpill(page);
        // A laptop shows every column without scrolling inside a panel.
        if (size.width >= 1440) expect(scrolling, `${p.label} at 1440px scrolls inside a panel`).toEqual([]);
      });
    }
  });
}

/** A new host with a minute of samples: many short-lived curl pids, paths and per-CPU counters. */
async function makeHost(page: Page, prefix: string): Promise<string> {
  const hostname = `${prefix}-${Date.now().toString(36)}`;
  const tokenRes = await page.request.post("/api/v1/host-tokens", { data: { hostname } });
  expect(tokenRes.status(), await tokenRes.text()).toBe(200);
  const { token } = (await tokenRes.json()) as { token: string };
  const headers = { authorization: `Bearer ${token}` };
  const started = new Date(Date.now() - 3_600_000).toISOString();
  const probes = [
    "listen_capped",
    "listen_overflow",
    "connect_latency",
    "net_rx_softirq",
    "icmp_frag_needed",
  ].map((probe) => ({ probe, state: "on", startedAt: started }));
  const hello = await page.request.post("/api/v1/agent/hello", {
    headers,
    data: {
      protocolVersion: 1,
      agentVersion: TIDE_VERSION,
      hostname,
      kernelRelease: "6.12.38+deb13-amd64",
      roles: ["proxy"],
      probes,
      dataPlane: [],
    },
  });
  expect(hello.status(), await hello.text()).toBe(200);

  const start = Date.now() - 20_000;
  const observations = Array.from({ length: 20 }, (_, t) => ({
    schemaVersion: 1,
    hostId: hostname,
    agentVersion: TIDE_VERSION,
    kernelRelease: "6.12.38+deb13-amd64",
    sampledAt: new Date(start + t * 1000).toISOString(),
    namespaces: [
      {
        netns: { inode: 4026531840, name: null, root: true },
        pids: [1],
        counters: {
          TcpActiveOpens: 1000 + 50 * t,
          TcpPassiveOpens: 5000 + 400 * t,
          TcpExtListenOverflows: 0,
        },
        sockstat: { tcpInuse: 42, tcpOrphan: 0, tcpTw: 310, tcpAlloc: 60, tcpMemPages: 12 },
        sysctls: {
          somaxconn: 4096,
          tcpMaxSynBacklog: 4096,
          tcpSyncookies: 1,
          tcpRmem: [4096, 131072, 6291456],
          ipLocalPortRange: [32768, 60999],
          tcpMtuProbing: 0,
        },
        listeners: [{ address: "0.0.0.0", port: 8080, recvQ: 0, sendQ: 4096, requestedBacklog: 4096 }],
        listenPorts: [{ port: 8080, sockets: 1 }],
      },
    ],
    cpus: [0, 1, 2, 3].map((cpu) => ({
      cpu,
      softnetProcessed: 100_000 + 2_000_000 * t,
      softnetDropped: 0,
      softnetTimeSqueeze: cpu === 1 ? 30_000 * t : 0,
      netRxSoftirqs: 50_000 + 900_000 * t,
    })),
    probes,
    probeResults: {
      listenCapped: [],
      listenOverflow: [],
      // Health checks forking short-lived processes: 30 pids, each connecting in 64-128 µs (one
      // with a 65 ms tail), plus a long-lived haproxy with a 1 s tail and EADDRNOTAVAIL. Each pid
      // would be a row without grouping.
      connectLatency: [
        ...Array.from({ length: 30 }, (_, i) => ({
          netnsInode: 4026531840,
          pid: 20_000 + i,
          comm: i % 3 === 0 ? "check_http" : `curl-worker-${i}`,
          latencyUs: [0, 0, 0, 0, 0, 0, t, 0, 0, 0, 0, 0, 0, 0, 0, 0, i === 7 ? t : 0],
          eaddrnotavail: 0,
          evenPorts: t,
          oddPorts: t,
        })),
        {
          netnsInode: 4026531840,
          pid: 4242,
          comm: "haproxy",
          latencyUs: [0, 0, 0, 0, 0, 0, 10 * t, 20 * t, 5 * t, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, t],
          eaddrnotavail: t,
          evenPorts: 0,
          oddPorts: 30 * t,
        },
      ],
      netRxSoftirq: [0, 1, 2, 3].map((cpu) => ({
        cpu,
        durationUs: [0, 0, 900 * t, 40 * t, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, cpu === 1 ? t : 0],
        intervalMaxUs: cpu === 1 ? 1_234_567 : 9,
      })),
      icmpFragNeeded: [],
    },
    paths: [
      {
        target: "edge-gateway-01.dc1.example.net",
        method: "tracepath",
        measuredAt: new Date(start).toISOString(),
        localMtu: 1500,
        pmtu: 1480,
        hops: 7,
        reached: true,
        blackhole: false,
        evidence: " 1?: [LOCALHOST]  pmtu 1500",
      },
    ],
  }));
  const res = await page.request.post("/api/v1/agent/observations", {
    headers,
    data: { observations, dataPlane: [], replayed: false },
  });
  expect(res.status(), await res.text()).toBe(200);
  return hostname;
}

test("the host page groups connect() latency by command, worst first, at most ten rows", async ({ page }) => {
  await signIn(page);
  const hostname = await makeHost(page, "e2e-layout-connect");
  await page.goto(`/hosts/${hostname}`);
  const panel = page.getByTestId("connect-latency");
  const rows = panel.getByTestId("connect-row");
  // 31 pids under 22 commands: check_http's ten pids are one row; ten rows shown, the rest summed.
  await expect(rows).toHaveCount(10);
  // haproxy has the slow tail (the 1 s bucket) and EADDRNOTAVAIL: it leads.
  await expect(rows.first()).toHaveAttribute("data-comm", "haproxy");
  await expect(panel.locator('[data-testid="connect-row"][data-comm="check_http"]')).toContainText("10 pids");
  await expect(panel.getByTestId("connect-more")).toContainText("12 more commands (12 pids");
});

test("a revoke question moves no column of the token table and Escape gives focus back", async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page);
  const stamp = Date.now().toString(36);
  for (const name of [`e2e-cols-a-${stamp}`, `e2e-cols-b-${stamp}`]) {
    const res = await page.request.post("/api/v1/tokens", { data: { name, scopes: ["read"] } });
    expect(res.status(), await res.text()).toBe(200);
  }
  await page.goto("/settings/tokens");
  const table = page.getByTestId("token-list");
  const columns = () =>
    table.locator("thead th").evaluateAll((ths) => ths.map((th) => th.getBoundingClientRect().left));
  await expect(table.getByTestId("token-row").filter({ hasText: `e2e-cols-a-${stamp}` })).toBeVisible();
  const before = await columns();
  const row = table.getByTestId("token-row").filter({ hasText: `e2e-cols-a-${stamp}` });
  await row.getByTestId("revoke-token").click();
  await expect(row.getByTestId("confirm-revoke")).toBeVisible();
  expect(await columns()).toEqual(before);
  // The question and both buttons stay inside the panel.
  const panel = await table.evaluate((t) => t.closest(".panel")!.getBoundingClientRect().right);
  const keep = await row.getByRole("button", { name: "Keep" }).boundingBox();
  expect(keep!.x + keep!.width).toBeLessThanOrEqual(panel);
  // The question has focus on its Revoke button; Escape keeps the token and focus returns.
  await expect(row.getByTestId("confirm-revoke")).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(row.getByTestId("revoke-token")).toBeFocused();
});

test("a table wider than a phone scrolls in a region the keyboard reaches", async ({ page }) => {
  await signIn(page);
  const box = page.getByTestId("pools-table").locator("xpath=..");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/");
  await expect(box).toHaveAttribute("data-overflowing", "true");
  await expect(box).toHaveAttribute("tabindex", "0");
  await expect(box).toHaveAttribute("role", "region");
  await box.focus();
  await page.keyboard.press("ArrowRight");
  await expect.poll(() => box.evaluate((el) => el.scrollLeft)).toBeGreaterThan(0);
  // Where the table fits, the box is no Tab stop.
  await page.setViewportSize({ width: 1440, height: 900 });
  await expect(box).toHaveAttribute("data-overflowing", "false");
  await expect(box).not.toHaveAttribute("tabindex", /.*/);
});

test("the skip link is the first Tab stop and moves focus to the page's content", async ({ page }) => {
  await signIn(page);
  await page.goto("/");
  await expect(page.getByTestId("pools-table")).toBeVisible();
  await page.keyboard.press("Tab");
  const skip = page.getByRole("link", { name: "Skip to content" });
  await expect(skip).toBeFocused();
  await expect(skip).toBeVisible();
  await page.keyboard.press("Enter");
  await expect(page.locator("main")).toBeFocused();
  // The next Tab stop is inside the content, not back in the header.
  await page.keyboard.press("Tab");
  expect(await page.evaluate(() => document.activeElement?.closest("main") !== null)).toBe(true);
});

test("a dialog focuses its first field and gives focus back to its opener on close", async ({ page }) => {
  await signIn(page);
  await page.goto("/");
  await page.getByTestId("pools-table").getByRole("link").first().click();
  const opener = page.getByTestId("open-add-proxy");
  await opener.click();
  const dialog = page.getByTestId("add-proxy-dialog");
  await expect(dialog).toBeVisible();
  const first = dialog.locator("input, select, textarea").first();
  await expect(first).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(dialog).toHaveCount(0);
  await expect(opener).toBeFocused();
  // Closed by its own button too.
  await opener.click();
  await page.getByTestId("close-add-proxy").click();
  await expect(opener).toBeFocused();
});

test("at 390 px the header's menu opens the navigation and closes after a choice", async ({
  page,
}, testInfo) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page);
  const errors = watchConsoleErrors(page);
  const nav = page.getByRole("navigation", { name: "Main" });
  await expect(nav).toBeHidden();
  const menu = page.getByRole("button", { name: "Menu" });
  await expect(menu).toHaveAttribute("aria-expanded", "false");
  await menu.click();
  await expect(menu).toHaveAttribute("aria-expanded", "true");
  await expect(nav).toBeVisible();
  await checkPage(page, testInfo, "menu-open", errors);
  await nav.getByRole("link", { name: "Hosts" }).click();
  await expect(page).toHaveURL(/\/hosts$/);
  await expect(nav).toBeHidden();
});
