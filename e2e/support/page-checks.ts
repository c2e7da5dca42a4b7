/**
 * Checks every console page must pass at every width: no sideways page scroll, no console errors,
 * no serious or critical accessibility violations (axe-core), and a full-page screenshot kept as a
 * file. Specs open a page, then call checkPage();
 * watchConsoleErrors() must be attached before the page loads so errors during hydration are seen.
 *
 * Screenshots: e2e/test-results/<test>/<page>-<width>.png (playwright.config.ts outputDir; each
 * run starts it afresh), also attached to the test for reporters.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, type TestInfo } from "@playwright/test";

/** The widths the console is built for: a phone held upright and a laptop. */
export const WIDTHS = [
  { name: "390", width: 390, height: 844 },
  { name: "1440", width: 1440, height: 900 },
] as const;

/** Collects console errors and uncaught page errors from now on. */
export function watchConsoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") errors.push(msg.text());
  });
  page.on("pageerror", (err) => errors.push(String(err)));
  return errors;
}

/** How far the page itself scrolls sideways, in CSS pixels (0 when it fits). */
export async function sidewaysOverflow(page: Page): Promise<{ overflow: number; widest: string[] }> {
  return page.evaluate(() => {
    const root = document.scrollingElement ?? document.documentElement;
    const overflow = root.scrollWidth - root.clientWidth;
    // Name the elements that stick out past the viewport, so a failure says where to look.
    const widest: string[] = [];
    if (overflow > 0) {
      for (const el of Array.from(document.querySelectorAll("body *"))) {
        const r = el.getBoundingClientRect();
        if (r.right > root.clientWidth + 1 && r.width > 0) {
          const id = el.getAttribute("data-testid");
          const cls = typeof el.className === "string" ? el.className.split(" ")[0] : "";
          widest.push(
            `${el.tagName.toLowerCase()}${id ? `[data-testid=${id}]` : ""}${cls ? `.${cls}` : ""} right=${Math.round(r.right)}`,
          );
          if (widest.length >= 8) break;
        }
      }
    }
    return { overflow, widest };
  });
}

/** axe-core violations of impact serious or critical, as readable lines. */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} (${v.nodes
          .map((n) => n.target.join(" "))
          .slice(0, 3)
          .join(", ")})`,
    );
}

/**
 * Keeps a full-page screenshot of the open page as `<label>-<width>.png` in the test's output
 * folder (and attached to the test), whatever the checks then find.
 */
export async function keepScreenshot(page: Page, testInfo: TestInfo, label: string): Promise<void> {
  const width = page.viewportSize()?.width ?? 0;
  const name = `${label}-${width}.png`;
  // The file is the artifact; the attachment (in memory, no second copy on disk) is for reporters.
  const body = await page.screenshot({ fullPage: true, path: testInfo.outputPath(name) });
  await testInfo.attach(name, { body, contentType: "image/png" });
}

/**
 * Keeps a screenshot (keepScreenshot), then asserts the open page fits its width, logged no errors
 * and has no serious a11y violations.
 */
export async function checkPage(
  page: Page,
  testInfo: TestInfo,
  label: string,
  errors: string[],
): Promise<void> {
  const width = page.viewportSize()?.width ?? 0;
  await keepScreenshot(page, testInfo, label);
  const { overflow, widest } = await sidewaysOverflow(page);
  expect(overflow, `${label} at ${width}px scrolls sideways by ${overflow}px: ${widest.join("; ")}`).toBe(0);
  expect(await seriousA11yViolations(page), `${label} at ${width}px: axe serious/critical`).toEqual([]);
  expect(errors, `${label} at ${width}px logged console errors`).toEqual([]);
}
