import type { APIRequestContext } from "@playwright/test";
import { expect, signIn, test } from "../support/fixtures";
import { checkPage, watchConsoleErrors } from "../support/page-checks";
import { TIDE_VERSION } from "../support/tide-version";

/**
 * Enrollment in one command: an admin adds a host in the console and copies the command the dialog
 * shows; the host (here: a request with no cookie and no token, as `tide-agent enroll` makes it)
 * trades the token in it for its own host token, and shows on the Hosts page. The token works once.
 * Removing the host on its page makes its host token fail at once. Everything this spec touches it
 * creates, under a name unique to this run.
 */
const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
const hostname = `e2e-enroll-${run}`;

test.use({ viewport: { width: 1440, height: 900 } });

/** POST /api/v1/enroll as tide-agent enroll does it: the token in the body is the only credential. */
async function enroll(request: APIRequestContext, token: string) {
  const res = await request.post("/api/v1/enroll", {
    data: { token, agentVersion: TIDE_VERSION, kernelRelease: "6.12.38+deb13-amd64" },
  });
  return { status: res.status(), body: (await res.json()) as Record<string, unknown> };
}

test("an admin adds a host, the host enrolls with the command once, the admin removes it", async ({
  page,
  playwright,
  baseURL,
}, testInfo) => {
  const errors = watchConsoleErrors(page);
  await signIn(page);
  // The host's side: a fresh request context, so no session cookie goes with it.
  const host = await playwright.request.newContext({ baseURL });
  let command = "";
  let token = "";

  await test.step("Add host shows the command once, with when its token expires", async () => {
    await page.goto("/hosts");
    await page.getByTestId("add-host").click();
    const dialog = page.getByTestId("add-host-dialog");
    await expect(dialog).toBeVisible();
    await dialog.getByTestId("add-host-hostname").fill(hostname);
    await expect(dialog.getByTestId("add-host-role-proxy")).toBeChecked();
    await dialog.getByTestId("add-host-role-director").check();
    await dialog.getByTestId("add-host-expiry").selectOption({ label: "15 minutes" });
    await dialog.getByTestId("add-host-submit").click();

    const created = dialog.getByTestId("enroll-command");
    await expect(created).toContainText(`Run this on ${hostname} as root`);
    await expect(created).toContainText("shown only this once");
    await expect(created).toContainText(/works once, until \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ/);
    command = (await created.getByTestId("enroll-command-value").textContent()) ?? "";
    const match = /^tide-agent enroll (\S+) --token (tide_enroll_[A-Za-z0-9_-]+)$/.exec(command);
    expect(match, command).not.toBeNull();
    expect(match?.[1]).toBe(new URL(baseURL ?? "").origin);
    token = match?.[2] ?? "";
    await checkPage(page, testInfo, "add-host-command", errors);
    await created.getByTestId("enroll-command-dismiss").click();
    await expect(dialog).toBeHidden();

    const pending = page.locator(`[data-testid="enrollment-token-row"][data-hostname="${hostname}"]`);
    await expect(pending).toBeVisible();
    await expect(pending).toContainText("proxy, director");
    // Only the prefix is listed, never the token.
    await expect(page.getByText(token)).toHaveCount(0);
    await checkPage(page, testInfo, "hosts-pending-token", errors);
    await page.setViewportSize({ width: 390, height: 844 });
    await checkPage(page, testInfo, "hosts-pending-token", errors);
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  let hostToken = "";
  let consoleVersion = "";
  await test.step("the host trades the token for its own host token and shows on the Hosts page", async () => {
    const r = await enroll(host, token);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ hostname, roles: ["proxy", "director"] });
    hostToken = String(r.body.hostToken);
    consoleVersion = String(r.body.consoleVersion);
    // The built console knows its release version (the root package.json's).
    expect(consoleVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(hostToken).toMatch(/^tide_host_/);

    await page.reload();
    const row = page.locator(`[data-testid="host-row"][data-hostname="${hostname}"]`);
    await expect(row).toBeVisible();
    await expect(row).toContainText("proxy, director");
    await expect(
      page.locator(`[data-testid="enrollment-token-row"][data-hostname="${hostname}"]`),
    ).toHaveCount(0);
  });

  await test.step("the same token again is refused, saying by whom and when it was used", async () => {
    const again = await enroll(host, token);
    expect(again.status).toBe(409);
    expect(String(again.body.message)).toMatch(
      new RegExp(`^This enrollment token was already used by ${hostname} at \\S+Z;`),
    );
    expect(JSON.stringify(again.body)).not.toContain(token);
  });

  await test.step("Remove host on its page: its host token is refused at once", async () => {
    const hello = () =>
      host.post("/api/v1/agent/hello", {
        headers: { authorization: `Bearer ${hostToken}` },
        data: {
          protocolVersion: 1,
          agentVersion: consoleVersion,
          hostname,
          kernelRelease: null,
          roles: ["proxy", "director"],
          probes: [],
          dataPlane: [],
        },
      });
    // The agent reports with its new token (and the console now trusts it from memory for a while).
    const before = await hello();
    expect(before.status(), await before.text()).toBe(200);
    await page.locator(`[data-testid="host-row"][data-hostname="${hostname}"]`).getByRole("link").click();
    await expect(page.getByTestId("host-name")).toHaveText(hostname);
    await page.getByTestId("remove-host").click();
    await expect(page.getByText("Its host token is revoked at once")).toBeVisible();
    await checkPage(page, testInfo, "remove-host-confirm", errors);
    await page.getByTestId("confirm-remove-host").click();
    await expect(page).toHaveURL(/\/hosts$/);
    await expect(page.locator(`[data-testid="host-row"][data-hostname="${hostname}"]`)).toHaveCount(0);
    expect((await hello()).status()).toBe(401);
  });

  await host.dispose();
});
