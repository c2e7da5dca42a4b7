import type { APIRequestContext, Page } from "@playwright/test";
import { expect, signIn, test } from "../support/fixtures";
import { createHostToken, observation } from "../support/host-samples";
import { TIDE_VERSION } from "../support/tide-version";

/**
 * The sync view says only what it knows (issue 26). Two stand-in director agents (this spec posts
 * what tide-agent posts: hello, desired-state polls and one batch a second naming the table its
 * director serves) serve a pool of three proxies. A routine change is "propagating (1/2)" and never
 * "behind" nor a fleet alarm while one director takes a few seconds to pick it up; a director whose
 * reports stop while its agent still polls is "unknown (no report for …)", never "behind", even past
 * the change's expected propagation time; once its agent stops polling too it is silent and the
 * fleet alarm names it. Everything this spec touches it creates under names unique to this run, and
 * it removes its directors at the end.
 */
const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
const poolName = `e2e-sync-${run}`;
/** A /24 of TEST-NET-3 picked per run, so the binds of earlier runs never overlap this one. */
const net = `203.0.${Math.floor(Math.random() * 256)}`;

/** The interval tide-agent reports at on a small fleet, ms (one sample a second). */
const REPORT_INTERVAL_MS = 1_000;

async function call(api: APIRequestContext, method: "post" | "put" | "delete", url: string, data?: unknown) {
  const res = await api[method](url, data === undefined ? {} : { data });
  expect(res.status(), `${method.toUpperCase()} ${url}: ${await res.text()}`).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
}

/**
 * A stand-in tide-agent on a director host: every second it polls desired state (contact) and, while
 * `reporting`, posts a batch saying which table its director serves. Its director takes
 * `adoptDelayMs` to serve a new table once the agent has seen it.
 */
class StandInDirector {
  polling = true;
  reporting = true;
  adoptDelayMs = 0;
  private serving: string | null = null;
  private wanted: { hash: string; seenAt: number } | null = null;
  private t = 0;
  private stopped = false;
  private loop: Promise<void> | null = null;
  errors: string[] = [];

  constructor(
    private readonly api: APIRequestContext,
    readonly hostname: string,
    private readonly token: string,
  ) {}

  private get auth() {
    return { authorization: `Bearer ${this.token}` };
  }

  private dataPlane() {
    return [
      {
        component: "director",
        socket: "/run/tide/director.sock",
        reachable: true,
        error: null,
        version: TIDE_VERSION,
        tableHashes: this.serving ? { [poolName]: this.serving } : {},
        directorCounters: null,
        redirectCounters: null,
      },
    ];
  }

  async start(): Promise<void> {
    const res = await this.api.post("/api/v1/agent/hello", {
      headers: this.auth,
      data: {
        protocolVersion: 1,
        agentVersion: TIDE_VERSION,
        hostname: this.hostname,
        kernelRelease: "6.12.38+deb13-amd64",
        roles: ["director"],
        probes: observation({ hostname: this.hostname, t: 0, at: new Date(), overflowPerS: 0 }).probes,
        dataPlane: this.dataPlane(),
      },
    });
    expect(res.status(), await res.text()).toBe(200);
    this.loop = this.run();
  }

  private async tick(): Promise<void> {
    if (this.polling) {
      const res = await this.api.get("/api/v1/agent/desired", { headers: this.auth });
      if (res.status() !== 200) this.errors.push(`desired: HTTP ${res.status()} ${await res.text()}`);
      else {
        const desired = (await res.json()) as { directorTables: { poolName: string; contentHash: string }[] };
        const hash = desired.directorTables.find((d) => d.poolName === poolName)?.contentHash ?? null;
        if (hash && hash !== this.wanted?.hash) this.wanted = { hash, seenAt: Date.now() };
      }
    }
    if (this.wanted && Date.now() - this.wanted.seenAt >= this.adoptDelayMs) this.serving = this.wanted.hash;
    if (this.reporting) {
      const o = observation({ hostname: this.hostname, t: this.t++, at: new Date(), overflowPerS: 0 });
      const res = await this.api.post("/api/v1/agent/observations", {
        headers: this.auth,
        data: { observations: [o], dataPlane: this.dataPlane(), replayed: false },
      });
      if (res.status() !== 200) this.errors.push(`observations: HTTP ${res.status()} ${await res.text()}`);
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const started = Date.now();
      await this.tick().catch((e: unknown) => this.errors.push(String(e)));
      await new Promise((r) => setTimeout(r, Math.max(0, REPORT_INTERVAL_MS - (Date.now() - started))));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}

/**
 * Records, every 100 ms while the pool page is open, any "behind" on its served-by line and any
 * fleet alarm naming one of `hostnames`: a state shown for a moment between two assertions counts.
 */
async function watchSyncView(page: Page, hostnames: string[]): Promise<void> {
  await page.evaluate((names) => {
    const seen = { behind: [] as string[], alarm: [] as string[] };
    (window as unknown as { __syncSeen: typeof seen }).__syncSeen = seen;
    setInterval(() => {
      const servedBy = document.querySelector('[data-testid="served-by"]');
      const text = servedBy?.textContent ?? "";
      const states = [...(servedBy?.querySelectorAll("[data-state]") ?? [])].map((e) =>
        e.getAttribute("data-state"),
      );
      if (/\bbehind\b/.test(text) || states.includes("behind") || states.includes("not_served"))
        seen.behind.push(text);
      const alarm = document.querySelector('[data-testid="fleet-alarm"]')?.textContent ?? "";
      if (names.some((n) => alarm.includes(n))) seen.alarm.push(alarm);
    }, 100);
  }, hostnames);
}

async function syncSeen(page: Page): Promise<{ behind: string[]; alarm: string[] }> {
  return page.evaluate(
    () => (window as unknown as { __syncSeen: { behind: string[]; alarm: string[] } }).__syncSeen,
  );
}

test.use({ viewport: { width: 1440, height: 900 } });

test("a change propagating is not behind, late reports are unknown, and only silence raises the alarm", async ({
  page,
  request,
}) => {
  test.setTimeout(240_000);
  await signIn(page);
  const api = page.request;

  const pool = (await call(api, "post", "/api/v1/pools", {
    name: poolName,
    binds: [{ address: `${net}.10`, proto: "tcp", portStart: 443 }],
  })) as { id: string };
  for (let i = 1; i <= 3; i++)
    await call(api, "post", `/api/v1/pools/${pool.id}/proxies`, {
      address: `${net}.${20 + i}`,
      hostname: `proxy-sync-0${i}.${run}.example.net`,
    });
  const proxies = (
    (await (await api.get(`/api/v1/pools/${pool.id}`)).json()) as { proxies: { id: string }[] }
  ).proxies;

  const hostnames = [`e2e-sync-a-${run}.lab`, `e2e-sync-b-${run}.lab`];
  const directorIds: string[] = [];
  const agents: StandInDirector[] = [];
  try {
    for (const hostname of hostnames) {
      const d = (await call(api, "post", "/api/v1/directors", { hostname })) as { id: string };
      directorIds.push(d.id);
      await call(api, "put", `/api/v1/directors/${d.id}/pools/${pool.id}`, {});
    }
    for (const hostname of hostnames) {
      const agent = new StandInDirector(request, hostname, await createHostToken(page, hostname));
      await agent.start();
      agents.push(agent);
    }
    const [a, b] = agents as [StandInDirector, StandInDirector];
    const [hostA, hostB] = hostnames as [string, string];

    await page.goto(`/pools/${pool.id}`);
    const servedBy = page.getByTestId("served-by");
    const lagging = (hostname: string) =>
      servedBy.locator(`[data-testid="lagging-director"][data-hostname="${hostname}"]`);
    const alarmFor = (hostname: string) =>
      page.locator(`[data-testid="alarm-director"][data-hostname="${hostname}"]`);

    await test.step("both stand-ins serve the pool's table: served by 2/2, in sync", async () => {
      await expect(servedBy).toHaveAttribute("data-done", "true");
      await expect(servedBy).toHaveAttribute("data-state", "in_sync");
      await expect(servedBy).toContainText("served by 2/2 directors");
    });
    await watchSyncView(page, hostnames);

    await test.step("a routine drain: propagating (1/2) while one director takes 3 s, no alarm", async () => {
      b.adoptDelayMs = 3_000;
      const version = Number(await servedBy.getAttribute("data-version"));
      await call(api, "post", `/api/v1/proxies/${proxies[0]!.id}/drain`, { reason: "e2e sync view" });
      await expect(servedBy).toHaveAttribute("data-version", String(version + 1));
      await expect(servedBy).toContainText("propagating (1/2)");
      await expect(lagging(hostB)).toHaveAttribute("data-state", "propagating");
      await expect(servedBy).toHaveAttribute("data-done", "true", { timeout: 15_000 });
      // One more alarm refresh (5 s) after the change has been served.
      await page.waitForTimeout(5_500);
      expect(await syncSeen(page)).toEqual({ behind: [], alarm: [] });
      b.adoptDelayMs = 0;
    });

    await test.step("B's reports stop, its agent still polls: unknown (no report for …), never behind", async () => {
      b.reporting = false;
      const changed = Date.now();
      await call(api, "post", `/api/v1/proxies/${proxies[0]!.id}/abort`, { reason: "e2e sync view" });
      await expect(lagging(hostB)).toHaveAttribute("data-state", "unknown");
      await expect(lagging(hostB)).toContainText(/unknown \(no report for \d+s\)/);
      await expect(servedBy).toHaveAttribute("data-served", "1");
      // Past the change's expected propagation time (and an alarm refresh): still unknown, no alarm.
      const thresholds = (await (await api.get(`/api/v1/pools/${pool.id}/sync`)).json()) as {
        thresholds: { propagationExpectedMs: number; silentAfterMs: number };
      };
      const wait = thresholds.thresholds.propagationExpectedMs + 6_000 - (Date.now() - changed);
      await page.waitForTimeout(Math.max(0, wait));
      await expect(lagging(hostB)).toHaveAttribute("data-state", "unknown");
      await expect(alarmFor(hostB)).toHaveCount(0);
      await expect(alarmFor(hostA)).toHaveCount(0);
      expect(await syncSeen(page)).toEqual({ behind: [], alarm: [] });
    });

    await test.step("B's agent stops polling too: silent, and the fleet alarm names it", async () => {
      b.polling = false;
      const stopped = Date.now();
      // Silent after 5 s without contact; the alarm is re-read every 5 s.
      await expect(alarmFor(hostB)).toHaveAttribute("data-state", "silent", { timeout: 20_000 });
      console.log(`[sync view] agent paused -> fleet alarm: ${Date.now() - stopped} ms`);
      await expect(page.getByTestId("fleet-alarm")).toContainText(`${hostB} silent`);
      await expect(alarmFor(hostA)).toHaveCount(0);
      await expect(lagging(hostB)).toContainText(/unknown \(no report for \d+s\) silent/);
      expect((await syncSeen(page)).behind).toEqual([]);
    });

    await test.step("B's agent comes back: 2/2 again and the alarm goes", async () => {
      b.polling = true;
      b.reporting = true;
      await expect(servedBy).toHaveAttribute("data-done", "true", { timeout: 15_000 });
      await expect(alarmFor(hostB)).toHaveCount(0, { timeout: 15_000 });
      expect((await syncSeen(page)).behind).toEqual([]);
      expect(a.errors.concat(b.errors)).toEqual([]);
    });
  } finally {
    await Promise.all(agents.map((x) => x.stop()));
    // A silent director left behind would raise the alarm on every later spec's pages.
    for (const id of directorIds) await api.delete(`/api/v1/directors/${id}`);
  }
});
