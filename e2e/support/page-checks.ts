/**
 * Checks every console page must pass at every width: no sideways page scroll, no content spilling
 * out of its panel, no console errors, no serious or critical accessibility violations (axe-core),
 * and a full-page screenshot kept as a file. Specs open a page, then call checkPage();
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
 * Elements that stick out of the panel they sit in without a scrolling box (or the panel itself
 * scrolling) to hold them (a histogram drawn over the next panel, a cut column). `scrolling` lists the boxes that do
 * hold wide content; at the laptop width they should not need to.
 */
export async function panelSpill(page: Page): Promise<{ spill: string[]; scrolling: string[] }> {
  return page.evaluate(() => {
    const spill: string[] = [];
    const scrolling: string[] = [];
    const name = (el: Element) => {
      const id = el.getAttribute("data-testid");
      const cls = typeof el.className === "string" ? el.className.split(" ")[0] : "";
      return `${el.tagName.toLowerCase()}${id ? `[data-testid=${id}]` : ""}${cls ? `.${cls}` : ""}`;
    };
    for (const panel of Array.from(document.querySelectorAll(".panel"))) {
      const box = panel.getBoundingClientRect();
      const label = panel.getAttribute("data-testid") ?? panel.querySelector("h2")?.textContent ?? "";
      for (const el of Array.from(panel.querySelectorAll("*"))) {
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.right <= box.right + 1) continue;
        // Held by a box that scrolls or clips it, up to and including the panel itself.
        let held = false;
        for (let a = el.parentElement; a; a = a.parentElement) {
          if (getComputedStyle(a).overflowX !== "visible") {
            held = true;
            break;
          }
          if (a === panel) break;
        }
        if (!held && spill.length < 8)
          spill.push(`${name(el)} in panel "${label}" by ${Math.round(r.right - box.right)}px`);
      }
      for (const el of Array.from(panel.querySelectorAll("*"))) {
        const s = getComputedStyle(el).overflowX;
        if ((s === "auto" || s === "scroll") && el.scrollWidth > el.clientWidth + 1)
          scrolling.push(`${name(el)} in panel "${label}" (${el.scrollWidth} > ${el.clientWidth})`);
      }
    }
    return { spill, scrolling };
  });
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
 * Keeps a screenshot (keepScreenshot), then asserts the open page fits its width, keeps content
 * inside its panels, logged no errors and has no serious a11y violations.
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
  const { spill } = await panelSpill(page);
  expect(spill, `${label} at ${width}px: content outside its panel`).toEqual([]);
  expect(await seriousA11yViolations(page), `${label} at ${width}px: axe serious/critical`).toEqual([]);
  expect(errors, `${label} at ${width}px logged console errors`).toEqual([]);
}
