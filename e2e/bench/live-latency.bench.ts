/**
 * Latency from a kernel counter change to the browser, with the real agent (root):
 *
 *   packages/lab accept-queue incident (server namespace somaxconn 10) <- the built tide-agent in the
 *   root namespace (support/agent.ts), sampling every 1 s and posting to the console of the e2e
 *   stack (support/stack.ts) <- Chromium on the host page, live over SSE.
 *
 * Each round: wait until the page shows 0/s ListenOverflows for the server namespace, wait a random
 * 0..1 s (so rounds land at random points of the agent's sampling phase), start a burst of
 * connections that overflows the capped queue, and
 *   - t0: poll TcpExtListenOverflows in /proc/<server pid>/net/netstat (the server's namespace)
 *     every 10 ms; t0 is the first read that shows the counter higher (the change happened in the
 *     10 ms before);
 *   - sampled: the agent's sampledAt of the first point with a rate > 0 (set after it read the
 *     counters), as the page's own EventSource delivers it;
 *   - pushed: when the page's EventSource (/api/live/hosts/{id}) receives that point (a wrapper
 *     installed before the page's scripts adds the first listener);
 *   - shown: the first DOM change inside that namespace's ListenOverflows chart after the update
 *     arrived (React's commit of it; a MutationObserver).
 * Latency = shown - t0. All times are Date.now() on this machine (browser, agent and bench share
 * the clock). Prints figures only; no assertions on time. Run: npm run -w @tide/e2e bench
 * Env: TIDE_BENCH_LIVE_ROUNDS (default 20), TIDE_BENCH_LIVE_SKIP=1 (skip).
 */
import { chromium } from "@playwright/test";
import fs from "node:fs";
import { acceptQueue } from "@tide/lab/incidents";
import { chromiumLaunchOptions } from "../playwright.config";
import { requireRoot, SAMPLE_INTERVAL_MS, startAgent, type RunningAgent } from "../support/agent";
import { startStack, type Stack } from "../support/stack";

const ROUNDS = Number(process.env.TIDE_BENCH_LIVE_ROUNDS ?? 20);
const POLL_MS = 10;
const COUNTER = "TcpExtListenOverflows";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted: number[], q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

/** TcpExt ListenOverflows of the namespace `pid` lives in (/proc/PID/net/netstat: header + values). */
function listenOverflows(pid: number): number {
  const lines = fs.readFileSync(`/proc/${pid}/net/netstat`, "utf8").split("\n");
  for (let i = 0; i + 1 < lines.length; i += 2) {
    if (!lines[i]!.startsWith("TcpExt:")) continue;
    const names = lines[i]!.split(/\s+/);
    const values = lines[i + 1]!.split(/\s+/);
    const at = names.indexOf("ListenOverflows");
    if (at > 0) return Number(values[at]);
  }
  throw new Error(`no TcpExt ListenOverflows in /proc/${pid}/net/netstat`);
}

/** Resolves with Date.now() of the first read (every POLL_MS) where the counter exceeds `base`. */
function watchCounter(pid: number, base: number): { changed: Promise<number>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  let cancelled = false;
  const changed = new Promise<number>((resolve) => {
    const tick = () => {
      if (cancelled) return;
      if (listenOverflows(pid) > base) return resolve(Date.now());
      timer = setTimeout(tick, POLL_MS);
    };
    tick();
  });
  return {
    changed,
    cancel: () => {
      cancelled = true;
      clearTimeout(timer);
    },
  };
}

interface Round {
  t0: number;
  sampled: number;
  pushed: number;
  shown: number;
  /** Points of the namespace in the update that carried the rise (> 1: a batch of samples). */
  points: number;
  burst: string;
}

/**
 * Init script: wraps EventSource so the page's own live stream gets a first listener that notes
 * when the first point with a rate > 0 arrives (listeners run in the order added: this one runs
 * just before the page's). No second connection: the page's stream is what is measured.
 */
const STREAM_RECORDER = `
(() => {
  const w = window;
  w.__tide = { armed: false, sampled: null, pushed: null, shown: null, points: 0 };
  const Native = w.EventSource;
  w.EventSource = class extends Native {
    constructor(url, init) {
      super(url, init);
      if (!String(url).includes('/api/live/hosts/')) return;
      this.addEventListener('update', (e) => {
        const now = Date.now();
        if (!w.__tide.armed || w.__tide.pushed !== null) return;
        const u = JSON.parse(e.data);
        const ns = (u.namespaces || []).find((n) => n.key === w.__tideNsKey);
        const p = ns && ns.points.find((pt) => (pt.rates[w.__tideCounter] || 0) > 0);
        if (p) {
          w.__tide.pushed = now;
          w.__tide.sampled = Date.parse(p.at);
          w.__tide.points = ns.points.length;
        }
      });
    }
  };
})();
`;

/**
 * In the page once the chart is there: "shown" is the first DOM change inside the chart after the
 * update carrying the point arrived (React's commit of that update). Not "data-latest > 0": when the
 * agent sends two samples in one batch (a post was in flight), the latest rate can already be 0
 * again and only the line shows the spike.
 */
const DOM_RECORDER = `
(() => {
  const w = window;
  const sel = '[data-testid="namespace"][data-ns="' + w.__tideNsKey + '"] [data-testid="counter-chart"][data-counter="' + w.__tideCounter + '"]';
  new MutationObserver((records) => {
    if (!w.__tide.armed || w.__tide.pushed === null || w.__tide.shown !== null) return;
    const chart = document.querySelector(sel);
    if (chart && records.some((r) => chart.contains(r.target))) w.__tide.shown = Date.now();
  }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
})();
`;

async function main() {
  if (process.env.TIDE_BENCH_LIVE_SKIP === "1") {
    console.log("bench: live latency skipped (TIDE_BENCH_LIVE_SKIP=1)");
    return;
  }
  requireRoot();
  let stack: Stack | undefined;
  let agent: RunningAgent | undefined;
  let incident: acceptQueue.AcceptQueueHandle | undefined;
  const browser = await chromium.launch(chromiumLaunchOptions);
  try {
    stack = await startStack();
    const context = await browser.newContext({
      baseURL: stack.baseURL,
      viewport: { width: 1280, height: 1080 },
    });
    await context.addInitScript("globalThis.__name = (fn) => fn;");
    await context.addInitScript(STREAM_RECORDER);
    const page = await context.newPage();
    await page.goto("/sign-in");
    await page.getByTestId("sign-in-email").fill(stack.email);
    await page.getByTestId("sign-in-password").fill(stack.password);
    await page.getByTestId("sign-in-submit").click();
    await page.getByTestId("signed-in-role").waitFor();

    const hostname = `bench-live-${Date.now().toString(36)}`;
    agent = await startAgent({ request: context.request, baseURL: stack.baseURL, hostname });
    incident = await acceptQueue.setup({ requestedBacklog: 1024, somaxconn: 10, acceptIntervalMs: 100 });
    const pid = incident.serverPid;
    if (fs.readlinkSync(`/proc/${pid}/ns/net`) === fs.readlinkSync("/proc/self/ns/net")) {
      throw new Error(`server pid ${pid} is not in the incident's namespace`);
    }
    const nsKey = `name:${incident.namespaces.server.name}`;

    await page.goto(`/hosts/${hostname}`);
    const chart = page.locator(
      `[data-testid="namespace"][data-ns="${nsKey}"] [data-testid="counter-chart"][data-counter="${COUNTER}"]`,
    );
    await chart.waitFor({ timeout: 60_000 });
    await page.evaluate(([k, c]) => Object.assign(window, { __tideNsKey: k, __tideCounter: c }), [
      nsKey,
      COUNTER,
    ] as const);
    await page.evaluate(DOM_RECORDER);

    const rounds: Round[] = [];
    const failures: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // quiet: the latest point says 0/s (the previous burst is out of the rate)
      await page.waitForFunction(
        (sel) => document.querySelector(sel)?.getAttribute("data-latest") === "0",
        `[data-testid="namespace"][data-ns="${nsKey}"] [data-testid="counter-chart"][data-counter="${COUNTER}"]`,
        { timeout: 30_000 },
      );
      await page.evaluate(() => {
        const w = window as unknown as { __tide: Record<string, unknown> };
        Object.assign(w.__tide, { armed: true, sampled: null, pushed: null, shown: null, points: 0 });
      });
      await sleep(Math.random() * SAMPLE_INTERVAL_MS);
      const watch = watchCounter(pid, listenOverflows(pid));
      try {
        const burst = incident.trigger({ count: 40, durationMs: 300 });
        const t0 = await Promise.race([
          watch.changed,
          sleep(10_000).then(() => {
            throw new Error("the burst did not overflow the queue within 10 s");
          }),
        ]);
        const shown = (await (
          await page.waitForFunction(
            () => (window as unknown as { __tide: { shown: number | null } }).__tide.shown,
            undefined,
            { timeout: 30_000 },
          )
        ).jsonValue()) as number;
        const rec = (await page.evaluate(
          () =>
            (
              window as unknown as {
                __tide: { sampled: number | null; pushed: number | null; points: number };
              }
            ).__tide,
        )) as { sampled: number | null; pushed: number | null; points: number };
        const b = await burst;
        rounds.push({
          t0,
          shown,
          sampled: rec.sampled ?? NaN,
          pushed: rec.pushed ?? NaN,
          points: rec.points,
          burst: `${b.connected}/${b.attempted}`,
        });
        const r = rounds.at(-1)!;
        console.log(
          `  round ${String(i + 1).padStart(2)}: ${r.shown - r.t0} ms (sample +${r.sampled - r.t0}, push +${r.pushed - r.sampled}, render +${r.shown - r.pushed}; ${r.points} point(s) in the update, burst ${r.burst})`,
        );
      } catch (e) {
        failures.push(e instanceof Error ? e.message : String(e));
        console.log(`  round ${i + 1}: failed: ${failures.at(-1)}`);
      } finally {
        watch.cancel();
        await page.evaluate(() => {
          (window as unknown as { __tide: { armed: boolean } }).__tide.armed = false;
        });
      }
    }

    const fig = (xs: number[]) => {
      const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
      return `p50 ${pct(s, 0.5)} ms, p95 ${pct(s, 0.95)} ms, max ${s.at(-1) ?? NaN} ms (n ${s.length})`;
    };
    console.log(
      `bench: kernel counter change -> browser (real agent, accept-queue incident, ${rounds.length}/${ROUNDS} rounds)`,
    );
    console.log(
      `  latency (ListenOverflows rises in the namespace -> the chart shows the new point): ${fig(rounds.map((r) => r.shown - r.t0))}`,
    );
    console.log(
      `    wait for the agent's sample (sampledAt - change): ${fig(rounds.map((r) => r.sampled - r.t0))}`,
    );
    console.log(
      `    agent post + ingest + NOTIFY + SSE push (pushed - sampledAt): ${fig(rounds.map((r) => r.pushed - r.sampled))}`,
    );
    console.log(`    React render (shown - pushed): ${fig(rounds.map((r) => r.shown - r.pushed))}`);
    console.log(
      `  updates that carried the rise with more than one new point (a batch): ${rounds.filter((r) => r.points > 1).length}/${rounds.length}`,
    );
    console.log(
      `  agent: sampleIntervalMs ${SAMPLE_INTERVAL_MS}; the console link posts a sample at once when no post is in flight, else it goes with the next batch; counter read resolution ${POLL_MS} ms`,
    );
    if (failures.length > 0) {
      console.log(`  failed rounds: ${failures.length}`);
      process.exitCode = 1;
    }
  } finally {
    await incident?.teardown().catch((e: unknown) => console.error(e));
    await agent?.stop();
    await browser.close();
    await stack?.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
