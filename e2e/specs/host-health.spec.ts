import { expect, signIn, test } from "../support/fixtures";
import {
  createHostToken,
  hello,
  type observation,
  PORT,
  postSamples,
  WEB_INODE,
} from "../support/host-samples";
import { TIDE_VERSION } from "../support/tide-version";

/**
 * Host health: an agent's observations (posted here with a host token, as tide-agent would) become
 * live charts, flagged listeners and findings that an operator acknowledges. Each test creates its
 * own host, so it touches nothing it did not make.
 */

test("a host's overflowing listener shows live, and its finding is acknowledged", async ({
  page,
}, testInfo) => {
  await signIn(page);
  const hostname = `e2e-proxy-${Date.now().toString(36)}`;
  const token = await createHostToken(page, hostname);
  await hello(page.request, token, hostname);
  // 30 samples ending now: ListenOverflows +10/s in "web", Recv-Q 129 over Send-Q 128.
  const start = Date.now() - 30_000;
  const base = { hostname, start, overflowPerS: 10 };
  await postSamples(page.request, token, base, 0, 30);

  await test.step("the hosts list shows the host with its health", async () => {
    await page.goto("/hosts");
    const row = page.locator(`[data-testid="host-row"][data-hostname="${hostname}"]`);
    await expect(row).toBeVisible();
    await expect(row).toHaveAttribute("data-severity", "critical");
    await row.getByRole("link", { name: hostname }).click();
    await expect(page.getByTestId("host-name")).toHaveText(hostname);
  });

  const web = page.locator('[data-testid="namespace"][data-ns="name:web"]');
  const chart = web.locator('[data-testid="counter-chart"][data-counter="TcpExtListenOverflows"]');
  await test.step("the listener is flagged and the overflow chart shows 10/s", async () => {
    await expect(page.getByTestId("live-state")).toHaveAttribute("data-state", "live");
    const listener = web.locator(`[data-testid="listener-row"][data-port="${PORT}"]`);
    await expect(listener).toHaveAttribute("data-overflowing", "true");
    await expect(listener).toHaveAttribute("data-limited", "true");
    await expect(listener.getByTestId("flag-overflowing")).toBeVisible();
    await expect(listener.getByTestId("flag-limited")).toBeVisible();
    await expect(chart).toHaveAttribute("data-points", "30");
    await expect(chart.getByTestId("counter-latest")).toHaveText("10.0/s");
    await expect(page.getByTestId("host-findings").getByTestId("finding").first()).toBeVisible();
  });

  await test.step("the listener row and the chart say what the findings say", async () => {
    const listener = web.locator(`[data-testid="listener-row"][data-port="${PORT}"]`);
    const findings = page.getByTestId("host-findings");
    const evidence = (kind: string, metric: string) =>
      findings
        .locator(`[data-testid="finding"][data-kind="${kind}"]`)
        .locator(`[data-testid="evidence-row"][data-metric="${metric}"]`);
    const valueOf = async (kind: string, metric: string) => {
      const cell = evidence(kind, metric).getByTestId("evidence-value");
      await expect(cell).toBeVisible();
      return (await cell.textContent()) ?? "";
    };
    // The accept-queue finding knows the effective backlog (ss Send-Q); the listen() backlog the
    // service asked for is in the capped-backlog finding's evidence (listen_capped probe).
    const sendQ = await valueOf("accept_queue_overflow", "ss.listen.send_q");
    expect(sendQ).toBe("128");
    await expect(listener.getByTestId("listener-send-q")).toHaveText(sendQ);
    const requested = await valueOf("listen_backlog_capped", "probe.listen_capped.requested");
    expect(requested).toBe("4,096");
    await expect(listener.getByTestId("listener-backlog")).toHaveText(requested);

    // One rate: the chart's rate over its window is the finding's value over the same window.
    const rate = await valueOf("accept_queue_overflow", "TcpExtListenOverflows");
    expect(rate).toBe("10.0/s");
    await expect(chart.getByTestId("counter-average")).toHaveText(rate);
    const window = await evidence("accept_queue_overflow", "TcpExtListenOverflows")
      .getByTestId("evidence-window")
      .textContent();
    const seconds = /over the last (\d+) s/.exec(window ?? "")?.[1];
    expect(seconds, `evidence window "${window}"`).toBeDefined();
    await expect(chart).toHaveAttribute("data-window-seconds", seconds!);
    await expect(chart).toContainText(`over the last ${seconds} s`);
  });

  await test.step("new samples arrive over the live connection without a reload", async () => {
    await page.evaluate(() => {
      (window as unknown as { tideMarker: string }).tideMarker = "same-document";
    });
    // Two more samples, posted while the page is open.
    await postSamples(page.request, token, { ...base, overflowPerS: 10 }, 30, 32);
    await expect(chart).toHaveAttribute("data-points", "32");
    expect(await page.evaluate(() => (window as unknown as { tideMarker?: string }).tideMarker)).toBe(
      "same-document",
    );
    await page.screenshot({ path: testInfo.outputPath("host-page.png"), fullPage: true });
  });

  await test.step("the finding is on /findings; acknowledging moves it to acknowledged", async () => {
    await page.goto("/findings");
    await page.getByTestId("filter-host").selectOption({ label: hostname });
    const finding = page.locator('[data-testid="finding"][data-kind="accept_queue_overflow"]');
    await expect(finding).toHaveCount(1);
    await expect(finding).toHaveAttribute("data-status", "open");
    await expect(finding.getByTestId("finding-subject")).toContainText(`port ${PORT}`);
    await expect(finding.getByTestId("finding-subject")).toContainText("namespace web");
    await expect(finding.getByTestId("finding-evidence")).toContainText("TcpExtListenOverflows");
    await expect(finding.getByTestId("remedy-command").first()).toContainText("ip netns exec web");
    await finding.getByTestId("history-toggle").click();
    await expect(finding.getByTestId("history-event").first()).toHaveAttribute("data-type", "opened");
    await page.screenshot({ path: testInfo.outputPath("findings-page.png"), fullPage: true });

    await finding.getByTestId("acknowledge").click();
    await expect(finding).toHaveCount(0);
    await page.getByTestId("tab-acknowledged").click();
    await expect(page).toHaveURL(/status=acknowledged/);
    const acked = page.locator('[data-testid="finding"][data-kind="accept_queue_overflow"]');
    await expect(acked).toHaveAttribute("data-status", "acknowledged");
    await expect(acked.getByTestId("acknowledged-by")).toContainText("acknowledged by");
    await acked.getByTestId("history-toggle").click();
    await expect(acked.locator('[data-testid="history-event"][data-type="acknowledged"]')).toBeVisible();
  });
});

test("a live page whose stream is refused (a load balancer's 502) connects again", async ({ page }) => {
  await signIn(page);
  const hostname = `e2e-relive-${Date.now().toString(36)}`;
  const token = await createHostToken(page, hostname);
  await hello(page.request, token, hostname);
  await postSamples(page.request, token, { hostname, start: Date.now() - 10_000, overflowPerS: 0 }, 0, 10);
  // The first two stream requests get what a proxy in front of a killed console answers. The
  // browser's EventSource gives up for good on a non-200 answer; the page must open it again.
  let refused = 0;
  await page.route("**/api/live/hosts/**", async (route) => {
    if (refused < 2) {
      refused++;
      await route.fulfill({ status: 502, contentType: "text/plain", body: "bad gateway" });
    } else await route.continue();
  });
  await page.goto(`/hosts/${hostname}`);
  await expect(page.getByTestId("live-state")).toHaveAttribute("data-state", "offline");
  // Reopened after 1 s, then 2 s (+ up to 20 % each): live well within 10 s.
  await expect(page.getByTestId("live-state")).toHaveAttribute("data-state", "live", { timeout: 10_000 });
  expect(refused).toBe(2);
  // The reopened stream's first update carries the samples (the namespaces come only from it).
  await expect(page.locator('[data-testid="namespace"][data-ns="name:web"]')).toBeVisible();
});

test("a PMTU blackhole on a checked path becomes a pmtu_blackhole finding", async ({ page }) => {
  await signIn(page);
  const hostname = `e2e-edge-${Date.now().toString(36)}`;
  const token = await createHostToken(page, hostname);
  await hello(page.request, token, hostname);
  const start = Date.now() - 15_000;
  const paths = [
    {
      target: "10.30.0.2",
      method: "tracepath",
      measuredAt: new Date(start).toISOString(),
      localMtu: 1500,
      pmtu: 1500,
      hops: null,
      reached: true,
      blackhole: true,
      evidence: " 1?: [LOCALHOST]  pmtu 1500\n 2:  no reply\n     Too many hops: pmtu 1500",
    },
  ];
  await postSamples(page.request, token, { hostname, start, overflowPerS: 0, paths }, 0, 15);

  await page.goto(`/hosts/${hostname}`);
  await expect(page.locator('[data-testid="path-row"][data-blackhole="true"]')).toBeVisible();

  await test.step("a target from the agent's own config is counted and named as such", async () => {
    const form = page.getByTestId("pmtu-targets");
    await expect(form.getByTestId("pmtu-agent-target-list")).toHaveText("10.30.0.2");
    await expect(form.getByTestId("pmtu-target-count")).toHaveAttribute("data-count", "1");
  });

  await test.step("an operator sets the targets the agent checks; a bad one is refused with a reason", async () => {
    const form = page.getByTestId("pmtu-targets");
    const desiredTargets = async () => {
      const res = await page.request.get("/api/v1/agent/desired", {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status()).toBe(200);
      return ((await res.json()) as { pmtuTargets: unknown }).pmtuTargets;
    };
    // The browser checks every line: a bad one is named in a sentence and never sent.
    const sent: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("setPmtuTargets")) sent.push(r.url());
    });
    await form.getByTestId("pmtu-targets-edit").click();
    await form.getByTestId("pmtu-targets-text").fill("10.30.0.2 1472\nedge-gw.example.net abc");
    await form.getByTestId("pmtu-targets-save").click();
    const problems = form.getByTestId("pmtu-targets-problems");
    await expect(problems).toContainText(
      "Line 2: 'abc' is not a packet size; sizes are whole numbers from 68 to 9000.",
    );
    await expect(problems).not.toContainText(/Invalid input|expected|received|→|\[0\]/);
    await expect(form.getByTestId("pmtu-targets-problem")).toHaveCount(1);
    expect(sent).toEqual([]);
    expect(await desiredTargets()).toEqual([]);
    // Editing the text clears the complaint.
    await form.getByTestId("pmtu-targets-text").fill("-oops");
    await expect(problems).toHaveCount(0);
    await form.getByTestId("pmtu-targets-save").click();
    await expect(form).toContainText(
      "Line 1: '-oops' is not a target; it must be an IP address or a host name",
    );
    expect(sent).toEqual([]);
    await form.getByTestId("pmtu-targets-text").fill("10.30.0.2 1472,1200\nedge-gw.example.net");
    await form.getByTestId("pmtu-targets-save").click();
    await expect(form.getByTestId("pmtu-target-list")).toHaveText("10.30.0.2, edge-gw.example.net");
    // Now the console sets 10.30.0.2 too: it is counted once, as the console's.
    await expect(form.getByTestId("pmtu-agent-target-list")).toHaveCount(0);
    await expect(form.getByTestId("pmtu-target-count")).toHaveAttribute("data-count", "2");
    expect(sent.length).toBeGreaterThan(0);
    expect(await desiredTargets()).toEqual([
      { target: "10.30.0.2", sizes: [1200, 1472] },
      { target: "edge-gw.example.net", sizes: [] },
    ]);
  });

  await page.goto("/findings?kind=pmtu_blackhole");
  await page.getByTestId("filter-host").selectOption({ label: hostname });
  const finding = page.locator('[data-testid="finding"][data-kind="pmtu_blackhole"]');
  await expect(finding).toHaveCount(1);
  await expect(finding).toHaveAttribute("data-severity", "critical");
  await expect(finding.getByTestId("finding-subject")).toContainText("path 10.30.0.2");
});

/** A director whose counters grow by `pps` packets a second, 2 drops a second for want of a bind. */
function director(t: number, pps: number) {
  const fwd = pps * t;
  return [
    {
      component: "director",
      socket: "/run/tide/director.sock",
      reachable: true,
      error: null,
      version: "0.4.0",
      tableHashes: { web: "ab".repeat(32) },
      directorCounters: {
        rx_packets: fwd + 2 * t,
        rx_bytes: 800 * fwd,
        forwarded_packets: fwd,
        forwarded_bytes: 840 * fwd,
        forwarded_icmp_pmtu: 0,
        forwarded_icmp_echo: 0,
        forwarded_ipv4: fwd,
        forwarded_ipv6: 0,
        tx_failed: 0,
        dropped: { no_bind: 2 * t, malformed: 0, truncated: 0, too_big: 0, unsupported: 0, no_table: 0 },
      },
      redirectCounters: null,
    },
  ];
}

test("connect() latency per process, NET_RX per CPU and the director's packet rates show live", async ({
  page,
}) => {
  await signIn(page);
  const hostname = `e2e-director-${Date.now().toString(36)}`;
  const token = await createHostToken(page, hostname);
  await hello(page.request, token, hostname);
  const started = new Date(Date.now() - 3_600_000).toISOString();
  // curl in "web": 5 connect() a second in 1-2 ms, one EADDRNOTAVAIL a second, odd ports only
  // (the even half of the range is full). CPU 1 had one 20 ms NET_RX run at t = 10.
  const edit = (o: ReturnType<typeof observation>, t: number) => {
    o.probes = o.probes.map((p) => ({ probe: p.probe, state: "on", startedAt: started }));
    o.probeResults.connectLatency = [
      {
        netnsInode: WEB_INODE,
        pid: 5151,
        comm: "curl",
        latencyUs: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5 * t],
        eaddrnotavail: t,
        evenPorts: 0,
        oddPorts: 5 * t,
      },
    ] as never[];
    o.probeResults.netRxSoftirq = [0, 1].map((cpu) => ({
      cpu,
      durationUs: [0, 0, 900 * t, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, cpu === 1 && t >= 10 ? 1 : 0],
      intervalMaxUs: cpu === 1 && t === 10 ? 20_480 : 9,
    })) as never[];
    // bcc installed but unable to compile here (no kernel headers): reported, not fatal.
    Object.assign(o, {
      bcc: {
        tools: [
          { tool: "tcpconnlat", state: "off", reason: "kprobes_unavailable", detail: "no kprobe_events" },
          {
            tool: "softirqs",
            state: "off",
            reason: "kernel_headers_missing",
            detail: "no /lib/modules/x/build",
          },
        ],
        tcpConnectLatency: [],
        softirqTime: [],
      },
    });
  };
  const start = Date.now() - 20_000;
  const base = { hostname, start, overflowPerS: 0, edit };
  await postSamples(page.request, token, { ...base, dataPlane: director(19, 1000) }, 0, 20);

  await page.goto(`/hosts/${hostname}`);
  await expect(page.getByTestId("live-state")).toHaveAttribute("data-state", "live");

  await test.step("connect() latency: p99 in the 1-2 ms bucket, EADDRNOTAVAIL, odd ports", async () => {
    const curl = page.locator('[data-testid="connect-row"][data-pid="5151"]');
    await expect(curl).toContainText("curl");
    await expect(curl).toContainText("web");
    await expect(curl.locator("td").nth(2)).toHaveText("5.0");
    await expect(curl.locator("td").nth(4)).toHaveText(/^(1\.\d|2\.0) ms$/);
    await expect(curl.locator("td").nth(5)).toHaveText("19");
    await expect(curl.locator("td").nth(6)).toHaveText("100%");
    await expect(curl.getByTestId("latency-histogram")).toBeVisible();
  });

  await test.step("NET_RX: CPU 1's longest run is 20.5 ms", async () => {
    const cpu1 = page.locator('[data-testid="netrx-row"][data-cpu="1"]');
    await expect(cpu1.locator("td").nth(4)).toHaveText("20 ms");
    await expect(page.locator('[data-testid="netrx-row"][data-cpu="0"]').locator("td").nth(4)).toHaveText(
      "9 µs",
    );
  });

  await test.step("bcc tools are listed with why they are off", async () => {
    const softirqs = page.locator('[data-testid="bcc-row"][data-tool="softirqs"]');
    await expect(softirqs).toHaveAttribute("data-state", "off");
    await expect(softirqs).toContainText("kernel_headers_missing");
  });

  await test.step("the director's packet rates are computed live from pushed counters", async () => {
    const dir = page.locator('[data-testid="dataplane-component"][data-component="director"]');
    await expect(dir).toHaveAttribute("data-reachable", "true");
    await expect(dir.getByTestId("dataplane-tables")).toContainText("web abababababab");
    // Two more batches while the page is open: 1000 forwarded packets a second.
    for (const t of [20, 21]) {
      await postSamples(page.request, token, { ...base, dataPlane: director(t, 1000) }, t, t + 1);
      await expect(
        dir.locator('[data-counter="forwarded_packets"]').getByTestId("counter-latest"),
      ).not.toHaveText("—");
    }
    const fwd = dir.locator('[data-testid="counter-chart"][data-counter="forwarded_packets"]');
    await expect(fwd.getByTestId("counter-latest")).toHaveText("1000/s");
    const dropped = dir.locator('[data-testid="dataplane-counter"][data-counter="dropped_no_bind"]');
    await expect(dropped.locator("td").nth(2)).toHaveText("2.0/s");
  });
});

test("a host whose agent is two minor versions away says so, on the list and on its page", async ({
  page,
}) => {
  await signIn(page);
  const hostname = `e2e-skew-${Date.now().toString(36)}`;
  const token = await createHostToken(page, hostname);
  const [major, minor] = TIDE_VERSION.split(".").map(Number) as [number, number];
  const farVersion = `${major}.${minor + 2}.0`;
  const refused = await page.request.post("/api/v1/agent/hello", {
    headers: { authorization: `Bearer ${token}` },
    data: {
      protocolVersion: 1,
      agentVersion: farVersion,
      hostname,
      kernelRelease: "6.12.38+deb13-amd64",
      roles: ["proxy"],
      probes: [],
      dataPlane: [],
    },
  });
  expect(refused.status()).toBe(409);
  expect(((await refused.json()) as { message: string }).message).toContain("Upgrade the console");

  await page.goto("/hosts");
  const row = page.locator(`[data-testid="host-row"][data-hostname="${hostname}"]`);
  await expect(row).toContainText(`${farVersion} too far from the console`);
  await row.getByRole("link", { name: hostname }).click();
  await expect(page.getByTestId("version-skew")).toHaveText(
    new RegExp(
      `tide-agent ${farVersion.replace(/\./g, "\\.")} is 2 minor versions newer .* Upgrade the console\\.`,
    ),
  );
});
