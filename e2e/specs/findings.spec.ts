import type { Page } from "@playwright/test";
import { expect, signIn, test } from "../support/fixtures";
import { createHostToken, hello, PORT, postSamples } from "../support/host-samples";
import { checkPage, WIDTHS, watchConsoleErrors } from "../support/page-checks";

/**
 * A finding shows one rate: its narrative, its evidence value and its evidence window agree (the
 * rate over the seconds the samples cover, not a "1-minute average" of 24 s of data). Then the
 * findings page passes the page checks at both widths. Creates its own host.
 */
/** A new host with an overflowing listener: 25 samples a second apart (24 s of rates), 3 drops/s. */
async function overflowingHost(page: Page): Promise<string> {
  const hostname = `e2e-findings-${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
  const token = await createHostToken(page, hostname);
  await hello(page.request, token, hostname);
  await postSamples(page.request, token, { hostname, start: Date.now() - 25_000, overflowPerS: 3 }, 0, 25);
  return hostname;
}

test("a finding states one rate over the window its evidence shows", async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page);
  const hostname = await overflowingHost(page);

  await page.goto("/findings");
  await page.getByTestId("filter-host").selectOption({ label: hostname });
  const finding = page.locator('[data-testid="finding"][data-kind="accept_queue_overflow"]');
  await expect(finding).toHaveCount(1);
  // The narrative cites the port's own rate (the probe's), so it must say what that evidence row
  // says: same value, same window. The probe's first interval can start a sample after the
  // counters', so its window is 23 or 24 s; the counter covers all 24.
  const probe = finding.locator('[data-testid="evidence-row"][data-metric="probe.listen_overflow.drops"]');
  await expect(probe.getByTestId("evidence-value")).toHaveText("3.0/s");
  const probeWindow = /over the last (\d+) s/.exec(
    (await probe.getByTestId("evidence-window").textContent()) ?? "",
  );
  expect(probeWindow, "the probe row states its window").not.toBeNull();
  expect(Number(probeWindow![1])).toBeGreaterThanOrEqual(23);
  await expect(finding).toContainText(`3.0/s over the last ${probeWindow![1]} s, on this port`);
  const row = finding.locator('[data-testid="evidence-row"][data-metric="TcpExtListenOverflows"]');
  await expect(row.getByTestId("evidence-value")).toHaveText("3.0/s");
  await expect(row.getByTestId("evidence-window")).toContainText("over the last 24 s");
  await expect(finding.getByTestId("finding-subject")).toContainText(`port ${PORT}`);
  await expect(finding).not.toContainText("1-minute");
});

for (const size of WIDTHS) {
  test(`findings page at ${size.name} px`, async ({ page }, testInfo) => {
    await page.setViewportSize({ width: size.width, height: size.height });
    await signIn(page);
    const hostname = await overflowingHost(page);
    const errors = watchConsoleErrors(page);
    await page.goto("/findings");
    await page.getByTestId("filter-host").selectOption({ label: hostname });
    await expect(page.locator('[data-testid="finding"][data-kind="accept_queue_overflow"]')).toHaveCount(1);
    await checkPage(page, testInfo, "findings", errors);
  });
}
