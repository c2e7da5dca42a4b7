/**
 * Proxy health failover on the console lab (root; informational: the machine is shared, so the
 * figures are noisy). A throwaway PostgreSQL, the real console and the lab in console mode (its own
 * prefix), health checks on over REST (GUE + HTTP every 500 ms, timeout 300 ms, rise 2, fall 2).
 * Then 10 failures, rotating over the 3 proxies: a proxy's HTTP server gets SIGTERM, and from that
 * moment it measures
 *   (a) both directors' views say down (the views' `since`: the agents' clock, this machine's),
 *   (b) a table version without the proxy is written (its createdAt),
 *   (c) both directors serve that version (GET /pools/{id}/sync, polled every 100 ms or so).
 * Between failures the server is started again and the proxy pinned healthy then unpinned over
 * REST (PUT /proxies/{id}/health-pin, reason "bench"): pins are not automatic flips, so the
 * recovery hold (doubling with each flip in 10 minutes) never lengthens the run; the next failure
 * waits for the proxy healthy, unpinned and a table with every proxy served by both directors.
 * Exits non-zero only when the setup fails, a failure goes undetected for 30 s or its table is never
 * served (60 s): never on timing. Everything (namespaces, processes, database, temp dirs) is removed.
 *
 *   npm run -w @tide/lab bench
 */
import {
  HealthChange,
  Paged,
  PoolDetail,
  PoolHealth,
  Proxy,
  TableVersionDetail,
  TableVersionSummary,
  type PoolHealthCheck,
} from "@tide/contracts";
import { z } from "zod";
import { ConsoleLab, until } from "../src/console/console-lab-harness";
import { stopProcess } from "../src/lab-process";

const PREFIX = "tide-hfbench";
const FAILURES = 10;
/** A failure not seen by both directors' views within this is an error (exit 1). */
const DETECT_BOUND_MS = 30_000;
/** Its table not served by both directors within this is an error too. */
const SERVE_BOUND_MS = 60_000;
const PinReply = z.object({ proxy: Proxy, changed: z.array(HealthChange) });
type VersionDetail = z.infer<typeof TableVersionDetail>;
const log = (line: string) => console.error(`[health-failover] ${line}`);

interface Figures {
  n: number;
  proxy: string;
  /** SIGTERM until the server had exited. */
  stopMs: number;
  /** (a) both views down. */
  viewsMs: number;
  /** The console marked it unhealthy (changedAt). */
  healthMs: number;
  /** (b) the version without it written. */
  versionMs: number;
  /** (c) both directors serve it. */
  servedMs: number;
  version: number;
}

/** Nearest rank: p95 of 10 samples is the largest. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

let harness: ConsoleLab | undefined;
let closing: Promise<void> | undefined;
const cleanUp = () => (closing ??= harness?.close() ?? Promise.resolve());

async function main() {
  harness = await ConsoleLab.start({ prefix: PREFIX, tmpName: "tide-hfbench-", log });
  const h = harness;
  const lab = await h.up();
  const client = h.client();
  const state = lab.consoleState!;
  const poolId = state.poolId;
  const proxies = lab.proxies;
  const hostOf = (p: string) => state.proxies[p]!.hostname;
  const directorHosts = Object.values(state.directors)
    .map((d) => d.hostname)
    .sort();
  if (directorHosts.length !== 2) throw new Error(`expected 2 directors, got ${directorHosts.join(", ")}`);
  try {
    const health = () => h.rest("GET", `/pools/${poolId}/health`, PoolHealth);
    const newest = async () =>
      (await h.rest("GET", `/pools/${poolId}/tables?limit=1`, Paged(TableVersionSummary))).items[0]!;
    const proxyOf = (hh: PoolHealth, p: string) => hh.proxies.find((x) => x.hostname === hostOf(p))!;
    const viewsSay = (hh: PoolHealth, p: string, up: boolean) => {
      const views = proxyOf(hh, p).views;
      return (
        views.map((v) => v.director).join() === directorHosts.join() &&
        views.every((v) => v.up === up && !v.stale)
      );
    };
    /** The newest version, once it is after `after`, matches `want` and both directors serve it. */
    const served = async (what: string, after: number, want: (v: VersionDetail) => boolean) => {
      let last: unknown;
      const v = await until(
        `${what}: a version after v${after} served by both directors`,
        async () => {
          const top = await newest();
          last = { newest: `v${top.version} ${top.cause}` };
          if (top.version <= after) return undefined;
          const detail = await h.rest("GET", `/tables/${top.id}`, TableVersionDetail);
          if (!want(detail)) return undefined;
          const sync = await client.poolSync(poolId);
          last = { ...(last as object), sync: `v${sync.version} ${sync.servedBy}/${sync.directorCount}` };
          return sync.version === detail.version && sync.done && sync.servedBy === 2 ? detail : undefined;
        },
        SERVE_BOUND_MS,
        () => last,
      );
      const at = Date.now();
      // Not timed: the directors' own content hashes agree with the console.
      const hashes = await lab.tableHashes();
      if (Object.values(hashes).some((x) => x !== v.contentHash)) {
        throw new Error(
          `${what}: directors serve ${JSON.stringify(hashes)}, v${v.version} is ${v.contentHash}`,
        );
      }
      return { version: v, at };
    };
    let lastHealth: PoolHealth | undefined;
    /** Every proxy healthy, unpinned, up in both views; the newest version (all healthy) served. */
    const allHealthyServed = async (what: string) => {
      await until(
        `${what}: every proxy healthy, unpinned and up in both directors' views`,
        async () => {
          const hh = (lastHealth = await health());
          return !hh.failOpen &&
            proxies.every(
              (p) => viewsSay(hh, p, true) && proxyOf(hh, p).healthy && proxyOf(hh, p).pinned === null,
            )
            ? hh
            : undefined;
        },
        DETECT_BOUND_MS,
        () => lastHealth?.proxies.map((p) => [p.hostname, p.healthy, p.pinned, p.views.map((v) => v.up)]),
      );
      const top = await newest();
      return served(what, top.version - 1, (v) => v.backends.every((b) => b.healthy));
    };
    const pin = (p: string, pinned: boolean | null) =>
      h.rest("PUT", `/proxies/${state.proxies[p]!.proxyId}/health-pin`, PinReply, {
        pinned,
        reason: "bench",
      });

    const checkSettings: PoolHealthCheck = {
      enabled: true,
      intervalMs: 500,
      timeoutMs: 300,
      rise: 2,
      fall: 2,
      gue: true,
      service: { kind: "http", port: lab.topology.ports.http, path: "/", expectStatus: 200 },
    };
    await h.rest("PUT", `/pools/${poolId}/health-check`, PoolDetail, {
      healthCheck: checkSettings,
      reason: "lab: health failover bench",
    });
    await allHealthyServed("checks on");
    log("health checks on: every proxy up in both directors' views");

    const figures: Figures[] = [];
    for (let n = 1; n <= FAILURES; n++) {
      const p = proxies[(n - 1) % proxies.length]!;
      const before = (await newest()).version;
      const rec = lab.stateSnapshot().processes.find((x) => x.key === `${p}.server`);
      if (!rec) throw new Error(`no ${p}.server in the lab's state file`);
      const t0 = Date.now();
      if (await stopProcess(rec)) log(`${p}.server needed SIGKILL`);
      const stopMs = Date.now() - t0;
      const hDown = await until(
        `failure ${n}: ${p} down in both directors' views and unhealthy`,
        async () => {
          const hh = (lastHealth = await health());
          return viewsSay(hh, p, false) && !proxyOf(hh, p).healthy ? hh : undefined;
        },
        DETECT_BOUND_MS,
        () => lastHealth && proxyOf(lastHealth, p),
      );
      const s = await served(
        `failure ${n}: ${p} down`,
        before,
        (v) =>
          v.cause.startsWith("health:") &&
          v.cause.includes(`${hostOf(p)} down`) &&
          v.backends.find((b) => b.hostname === hostOf(p))?.healthy === false,
      );
      const since = proxyOf(hDown, p).views.map((v) => (v.since ? Date.parse(v.since) : NaN));
      const f: Figures = {
        n,
        proxy: p,
        stopMs,
        viewsMs: Math.max(...since) - t0,
        healthMs: Date.parse(proxyOf(hDown, p).changedAt) - t0,
        versionMs: Date.parse(s.version.createdAt) - t0,
        servedMs: s.at - t0,
        version: s.version.version,
      };
      figures.push(f);
      log(
        `failure ${n} (${p}): views down ${f.viewsMs} ms, v${f.version} written ${f.versionMs} ms, ` +
          `served by both ${f.servedMs} ms`,
      );

      // Restore without the recovery hold: server back, pinned healthy, its views up, unpinned.
      const tRestore = Date.now();
      await lab.startTestServer(p);
      await pin(p, true);
      await until(
        `restore ${n}: ${p} up in both directors' views`,
        async () => {
          const hh = (lastHealth = await health());
          return viewsSay(hh, p, true) && proxyOf(hh, p).healthy ? hh : undefined;
        },
        DETECT_BOUND_MS,
        () => lastHealth && proxyOf(lastHealth, p),
      );
      await pin(p, null);
      await allHealthyServed(`restore ${n}`);
      log(`restore ${n} (${p}): healthy and served again after ${Date.now() - tRestore} ms`);
    }

    const cols = (xs: (string | number)[]) => xs.map((x) => String(x).padStart(12)).join("");
    console.log(
      "proxy health failover on the console lab (2 directors check 3 proxies: GUE + HTTP every 500 ms, " +
        "timeout 300 ms, fall 2, rise 2)",
    );
    console.log(
      `  ${FAILURES} failures (a proxy's HTTP server stopped, rotating); ms from its SIGTERM until ` +
        "(a) both directors' views say down, (b) a table version without it is written, " +
        "(c) both directors serve that version",
    );
    console.log(
      `  ${"#".padStart(3)}  ${"proxy".padEnd(6)}${cols(["stop", "(a) views", "health", "(b) table", "(c) served", "version"])}`,
    );
    for (const f of figures) {
      console.log(
        `  ${String(f.n).padStart(3)}  ${f.proxy.padEnd(6)}${cols([f.stopMs, f.viewsMs, f.healthMs, f.versionMs, f.servedMs, `v${f.version}`])}`,
      );
    }
    for (const [label, stat] of [
      ["p50", (xs: number[]) => percentile(xs, 50)],
      ["p95", (xs: number[]) => percentile(xs, 95)],
      ["max", (xs: number[]) => Math.max(...xs)],
    ] as const) {
      const of = (k: keyof Figures) => stat(figures.map((f) => f[k] as number));
      console.log(
        `  ${label.padStart(3)}  ${"".padEnd(6)}${cols([of("stopMs"), of("viewsMs"), of("healthMs"), of("versionMs"), of("servedMs"), ""])}`,
      );
    }
    console.log(
      "  (p95 of 10 samples is the largest; (c) is polled, ~100 ms plus three REST calls of resolution.)",
    );
    console.log(
      "  The machine is shared and noisy (other labs, builds and tests run beside it): the figures " +
        "are informational, not a gate.",
    );
  } catch (e) {
    log(h.diagnostics(directorHosts));
    throw e;
  }
}

// `on`, not `once`: the temp cluster's own signal hook re-raises the signal (ending the process at
// once) when nobody else listens; this keeps the process up until the clean-up is done.
let interrupted = false;
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(sig, () => {
    if (interrupted) return log(`${sig}: still cleaning up`);
    interrupted = true;
    log(`${sig}: cleaning up`);
    void cleanUp()
      .catch((e: unknown) => console.error("clean-up:", e))
      .finally(() => process.exit(1));
  });
}

void (async () => {
  let failed = false;
  try {
    await main();
  } catch (error: unknown) {
    console.error(error);
    failed = true;
  }
  try {
    await cleanUp();
  } catch (error: unknown) {
    console.error("clean-up:", error);
    failed = true;
  }
  process.exit(failed || interrupted ? 1 : 0);
})();
