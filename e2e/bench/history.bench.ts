/**
 * History in the console (issue 16: "first chart < 1 s for 24 h"), against a bench stack (throwaway
 * PostgreSQL, the console's production build):
 *
 *   - one host with 7 days of one-minute rollups as the compactor leaves them (hours older than the
 *     1 s retention packed into one row each, the rest one row a minute; 3 namespaces, 16 counters
 *     each with a daily cycle and noise, 4 CPUs, gauges, NET_RX histograms: ~300 numbers a minute),
 *     and its last hour as 1 s samples sent through ingest's statement (storeBatch) and compacted
 *     by one compaction run (chunks, minute rollups; the newest ~2 minutes stay raw);
 *   - the history API (GET /api/v1/hosts/{id}/history, a read token, one request at a time):
 *     response time p50/p95 and body size for range=15m, 1h, 24h, 7d (RUNS each after a warm-up);
 *   - Chromium: navigation to the host page at ?range=24h (and 7d, 15m) -> the first history chart
 *     drawn, timed in the page from navigation start to the frame after the first chart's SVG path
 *     appears (median and max of LOADS cold loads).
 *
 * Figures only; no assertions. Run: npm run -w @tide/e2e bench (or node --import tsx
 * bench/history.bench.ts in e2e/). Env: TIDE_BENCH_HISTORY_RUNS (30), TIDE_BENCH_HISTORY_LOADS (5),
 * TIDE_BENCH_HISTORY_SKIP=1 (skip).
 */
import { chromium } from "@playwright/test";
import { newId } from "@tide/contracts";
import {
  createDb,
  encodeRollup,
  packRollups,
  runCompaction,
  storeBatch,
  type CompactionLimits,
  type Db,
  type MinuteRollup,
  type Prisma,
} from "@tide/db";
import { chromiumLaunchOptions } from "../playwright.config";
import { dataPlane, observation } from "../support/host-samples";
import { ADMIN_EMAIL } from "../support/stack";
import { startBenchStack } from "./bench-stack";
import { rng } from "./seeded-random";
import { TIDE_VERSION } from "../support/tide-version";

const RUNS = Number(process.env.TIDE_BENCH_HISTORY_RUNS ?? 30);
const LOADS = Number(process.env.TIDE_BENCH_HISTORY_LOADS ?? 5);
const HOSTNAME = "bench-history-01";
const DAYS = 7;
const RETENTION_MIN = 60; // TIDE_OBSERVATION_RETENTION_MINUTES default
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** The compactor's defaults (packages/api/src/services/telemetry/telemetry-compactor.ts). */
const LIMITS: CompactionLimits = {
  retentionMinutes: RETENTION_MIN,
  rollupDays: 30,
  hotWindowS: 90,
  maxMinutesPerRun: 2_000,
  minutesPerTransaction: 20,
  pruneLimit: 20_000,
  maxHoursPerRun: 500,
};

const NAMESPACES = [4026531840, 4026532301, 4026532402];
const COUNTERS = [
  "TcpExtListenOverflows",
  "TcpExtListenDrops",
  "TcpExtTCPReqQFullDoCookies",
  "TcpExtTCPReqQFullDrop",
  "TcpExtSyncookiesSent",
  "TcpExtTCPRcvCollapsed",
  "TcpExtPruneCalled",
  "IpFragFails",
  "IcmpMsgOutType3",
  "TcpExtTCPTimeouts",
  "IpInReceives",
  "IpOutRequests",
  "TcpActiveOpens",
  "TcpPassiveOpens",
  "TcpRetransSegs",
  "TcpInSegs",
];

/** A minute's rollup: each counter's rate follows a daily cycle with noise; a few are quiet. */
function syntheticRollup(minute: number, random: () => number): MinuteRollup {
  const day = 0.6 + 0.4 * Math.sin((2 * Math.PI * (minute % (24 * HOUR))) / (24 * HOUR));
  const r4 = (x: number) => (x === 0 ? 0 : Number(x.toPrecision(4)));
  const rates: MinuteRollup["rates"] = {};
  const gauges: MinuteRollup["gauges"] = {};
  const histograms: MinuteRollup["histograms"] = {};
  NAMESPACES.forEach((inode, n) => {
    COUNTERS.forEach((c, i) => {
      // A third of the counters are quiet (absent, as the compactor leaves all-zero series out).
      if ((i + n) % 3 === 0) return;
      const base = (i + 1) * (n + 1) * 5 * day;
      const lo = base * (0.7 + 0.1 * random());
      const hi = base * (1.1 + 0.3 * random());
      const avg = (lo + hi) / 2;
      rates[`ns/${inode}/${c}`] = [
        r4(lo),
        r4(hi),
        r4(avg),
        r4(avg * (0.9 + 0.2 * random())),
        Math.round(avg * 59),
      ];
    });
    for (const g of ["tcpInuse", "tcpOrphan", "tcpTw", "tcpAlloc", "tcpMemPages"]) {
      const v = Math.round(800 * day * (n + 1) * (0.9 + 0.2 * random()));
      gauges[`ns/${inode}/sockstat/${g}`] = [v - 20, v + 20, v, v];
    }
    gauges[`ns/${inode}/establishedTotal`] = [700, 760, 730, 731];
  });
  for (let cpu = 0; cpu < 4; cpu++) {
    for (const f of ["softnetProcessed", "netRxSoftirqs"]) {
      const v = 2000 * day * (0.9 + 0.2 * random());
      rates[`cpu/${cpu}/${f}`] = [r4(v * 0.8), r4(v * 1.2), r4(v), r4(v), Math.round(v * 59)];
    }
    histograms[`netRx/${cpu}/durationUs`] = [0, 0, 120, 900, 400, 30, 2].map((x) => Math.round(x * day));
    gauges[`netRx/${cpu}/intervalMaxUs`] = [40, 180, 90, 85];
  }
  return { v: 1, samples: 60, spanS: 59, rates, gauges, histograms };
}

/** 7 days of rollups before the last hour: packed by the hour where the compactor would have. */
async function seedRollups(
  db: Db,
  hostId: string,
  now: number,
): Promise<{ packed: number; minutes: number }> {
  const random = rng(7);
  const first = Math.floor((now - DAYS * 24 * HOUR) / HOUR) * HOUR;
  const samplesFrom = Math.floor((now - HOUR) / MINUTE) * MINUTE;
  const packedBefore = Math.floor((now - RETENTION_MIN * MINUTE) / HOUR) * HOUR;
  const rows: Prisma.ObservationRollupCreateManyInput[] = [];
  let minutes = 0;
  for (let hour = first; hour < samplesFrom; hour += HOUR) {
    const points = [];
    for (let m = hour; m < Math.min(hour + HOUR, samplesFrom); m += MINUTE) {
      points.push({ minute: new Date(m), rollup: syntheticRollup(m, random) });
    }
    minutes += points.length;
    if (hour + HOUR <= packedBefore) {
      rows.push({
        hostId,
        minute: new Date(hour),
        spanMinutes: 60,
        samples: points.length * 60,
        data: new Uint8Array(packRollups(new Date(hour), points)),
      });
    } else {
      for (const p of points) {
        rows.push({ hostId, minute: p.minute, samples: 60, data: new Uint8Array(encodeRollup(p.rollup)) });
      }
    }
  }
  for (let i = 0; i < rows.length; i += 200) {
    await db.observationRollup.createMany({ data: rows.slice(i, i + 200) });
  }
  return { packed: rows.filter((r) => r.spanMinutes === 60).length, minutes };
}

/** The last hour as 1 s samples through ingest's statement, then one compaction run. */
async function seedSamples(db: Db, hostId: string, now: number): Promise<number> {
  const start = Math.floor((now - HOUR) / MINUTE) * MINUTE;
  const seconds = Math.floor((now - start) / 1000);
  for (let t0 = 0; t0 < seconds; t0 += 300) {
    const rows = [];
    for (let t = t0; t < Math.min(t0 + 300, seconds); t++) {
      const at = new Date(start + t * 1000);
      const o = observation({ hostname: HOSTNAME, t, at, overflowPerS: t % 600 < 120 ? 10 : 0 });
      rows.push({ id: newId("observation"), sampledAt: at, payload: o as unknown as Prisma.InputJsonValue });
    }
    await storeBatch(
      db,
      hostId,
      rows,
      RETENTION_MIN * MINUTE,
      {
        dataPlane: dataPlane as unknown as Prisma.InputJsonValue,
        agentVersion: TIDE_VERSION,
        kernelRelease: null,
      },
      { now: new Date(now), maxFutureMs: MINUTE },
    );
  }
  await runCompaction(db, new Date(now), LIMITS);
  return seconds;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function main() {
  if (process.env.TIDE_BENCH_HISTORY_SKIP === "1") {
    console.log("bench: history skipped (TIDE_BENCH_HISTORY_SKIP=1)");
    return;
  }
  const stack = await startBenchStack({ name: "history" });
  const db = createDb(stack.dbUrl, { max: 4 });
  const browser = await chromium.launch(chromiumLaunchOptions);
  try {
    const hostId = newId("host");
    await db.host.create({ data: { id: hostId, name: HOSTNAME, roles: ["proxy"] } });
    const now = Date.now();
    const seedStart = performance.now();
    const rollups = await seedRollups(db, hostId, now);
    const seconds = await seedSamples(db, hostId, now);
    const [chunks, raw] = await Promise.all([
      db.observationChunk.count({ where: { hostId } }),
      db.observationSample.count({ where: { hostId } }),
    ]);
    console.log(
      `history: seeded ${rollups.minutes} minutes of rollups (${rollups.packed} packed hours), ` +
        `${seconds} s of samples (${chunks} chunks, ${raw} raw) in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`,
    );

    const context = await browser.newContext({
      baseURL: stack.baseURL,
      viewport: { width: 1440, height: 900 },
    });
    // tsx wraps named functions in __name(); the page needs a no-op one for page.evaluate.
    await context.addInitScript("globalThis.__name = (fn) => fn;");
    // The first history chart's SVG path, timed in the page from navigation start: when it is
    // inserted, and the next frame after that (it is on screen by then).
    await context.addInitScript(`
      window.__firstChart = null;
      const watch = new MutationObserver(() => {
        if (window.__firstChart) return;
        if (!document.querySelector('[data-testid="history-chart"] svg path')) return;
        watch.disconnect();
        const inserted = performance.now();
        requestAnimationFrame(() => setTimeout(() => {
          window.__firstChart = { inserted, painted: performance.now() };
        }, 0));
      });
      watch.observe(document, { childList: true, subtree: true });
    `);
    const page = await context.newPage();
    await page.goto("/sign-in");
    await page.getByTestId("sign-in-email").fill(ADMIN_EMAIL);
    await page.getByTestId("sign-in-password").fill(stack.password);
    await page.getByTestId("sign-in-submit").click();
    await page.getByTestId("signed-in-role").waitFor();
    const created = await page.request.post("/api/v1/tokens", {
      data: { name: "bench-history", scopes: ["read"] },
    });
    if (created.status() !== 200) throw new Error(`token: ${created.status()} ${await created.text()}`);
    const { token } = (await created.json()) as { token: string };

    console.log(`history API (GET /api/v1/hosts/{id}/history, ${RUNS} requests each, one at a time):`);
    for (const range of ["15m", "1h", "24h", "7d"]) {
      const url = `${stack.baseURL}/api/v1/hosts/${HOSTNAME}/history?range=${range}`;
      const get = async () => {
        const t = performance.now();
        const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
        const body = await res.text();
        if (res.status !== 200) throw new Error(`${range}: ${res.status} ${body.slice(0, 200)}`);
        return {
          ms: performance.now() - t,
          bytes: body.length,
          h: JSON.parse(body) as Record<string, unknown>,
        };
      };
      const warm = await get();
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) times.push((await get()).ms);
      console.log(
        `  range=${range.padEnd(3)} ${String(warm.h.tier).padEnd(7)} ${String(warm.h.label).padEnd(30)} ` +
          `${String(warm.h.points).padStart(5)} points, ${(warm.bytes / 1024).toFixed(0)} kB: ` +
          `p50 ${ms(pct(times, 50))}, p95 ${ms(pct(times, 95))}, first (warm-up) ${ms(warm.ms)}`,
      );
    }

    console.log(
      `browser: host page -> first history chart drawn (${LOADS} cold loads each, from navigation start):`,
    );
    for (const range of ["24h", "7d", "15m"]) {
      const path = `/hosts/${HOSTNAME}?range=${range}`;
      await page.goto(path);
      await page.waitForFunction(() => (window as unknown as { __firstChart: unknown }).__firstChart);
      const painted: number[] = [];
      const inserted: number[] = [];
      for (let i = 0; i < LOADS; i++) {
        await page.goto("about:blank");
        await page.goto(path, { waitUntil: "commit" });
        const handle = await page.waitForFunction(
          () =>
            (window as unknown as { __firstChart: { inserted: number; painted: number } | null })
              .__firstChart,
          undefined,
          { timeout: 60_000 },
        );
        const t = (await handle.jsonValue()) as { inserted: number; painted: number };
        painted.push(t.painted);
        inserted.push(t.inserted);
      }
      console.log(
        `  range=${range.padEnd(3)} first chart painted: median ${ms(pct(painted, 50))}, max ${ms(Math.max(...painted))}` +
          ` (in the DOM: median ${ms(pct(inserted, 50))})`,
      );
    }
  } finally {
    await browser.close();
    await db.$disconnect();
    await stack.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
