/**
 * Forwarding-table page in Chromium, against the same stack as the e2e tests (support/stack.ts):
 *   1. navigation -> first table rows visible, pool "api" (16 proxies), median of 5 loads;
 *   2. scrolling the virtualized list one viewport at a time until row 65535 is rendered.
 * Prints figures only; no assertions on time. Run: npm run -w @tide/e2e bench
 */
import { chromium } from "@playwright/test";
import { chromiumLaunchOptions } from "../playwright.config";
import { startStack } from "../support/stack";

const LOADS = 5;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const ms = (x: number) => `${x.toFixed(0)} ms`;

async function main() {
  const stack = await startStack();
  const browser = await chromium.launch(chromiumLaunchOptions);
  try {
    const context = await browser.newContext({
      baseURL: stack.baseURL,
      viewport: { width: 1280, height: 1080 },
    });
    // tsx (esbuild, keepNames) wraps named functions in __name(); functions passed to
    // page.evaluate carry those calls into the page, so the page needs a no-op __name.
    await context.addInitScript("globalThis.__name = (fn) => fn;");
    const page = await context.newPage();
    await page.goto("/sign-in");
    await page.getByTestId("sign-in-email").fill(stack.email);
    await page.getByTestId("sign-in-password").fill(stack.password);
    await page.getByTestId("sign-in-submit").click();
    await page.getByTestId("signed-in-role").waitFor();
    await page.goto("/");
    const href = await page
      .getByTestId("pools-table")
      .getByRole("link", { name: "api", exact: true })
      .getAttribute("href");
    if (!href) throw new Error("no link to pool api");
    const tableUrl = `${href}/table`;

    // Warm-up load (first hit compiles nothing in production, but fills server caches).
    await page.goto(tableUrl);
    await page.getByTestId("table-row").first().waitFor();

    const loads: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      await page.goto("about:blank");
      const start = performance.now();
      await page.goto(tableUrl, { waitUntil: "commit" });
      await page.getByTestId("table-row").first().waitFor({ state: "visible", timeout: 60_000 });
      loads.push(performance.now() - start);
    }

    const scroll = await page.evaluate(async () => {
      const el = document.querySelector<HTMLElement>('[data-testid="table-rows"]');
      if (!el) throw new Error("no table-rows");
      const frame = () => new Promise<void>((r) => requestAnimationFrame(() => r()));
      const maxRendered = () => {
        let max = -1;
        for (const row of el.querySelectorAll<HTMLElement>('[data-testid="table-row"]'))
          max = Math.max(max, Number(row.dataset.row));
        return max;
      };
      el.scrollTop = 0;
      await frame();
      const start = performance.now();
      let steps = 0;
      let frames = 0;
      while (!el.querySelector('[data-testid="table-row"][data-row="65535"]')) {
        el.scrollTop += el.clientHeight;
        steps += 1;
        // Wait until the rows at the new bottom edge are rendered (at most 30 frames per step).
        const bottom = Math.min(65535, Math.floor((el.scrollTop + el.clientHeight) / 22) - 2);
        for (let f = 0; f < 30; f++) {
          await frame();
          frames += 1;
          if (maxRendered() >= bottom) break;
        }
        if (steps > 100_000) throw new Error("row 65535 never rendered");
      }
      return { ms: performance.now() - start, steps, frames, viewport: el.clientHeight };
    });

    console.log("bench: forwarding-table page, pool api (16 proxies), Chromium headless");
    console.log(
      `  first rows visible after navigation: median ${ms(median(loads))} of ${LOADS} (${loads.map(ms).join(", ")})`,
    );
    console.log(
      `  scroll to row 65535: ${ms(scroll.ms)} (${scroll.steps} steps of ${scroll.viewport}px, ${scroll.frames} frames)`,
    );
  } finally {
    await browser.close();
    await stack.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
