/**
 * Benchmark (root): how fast a console change reaches every director of the lab, which the console
 * owns (packages/lab console mode: one real tide-agent per director, long-polling desired state).
 *
 *   change -> served   REST drain/activate of a proxy until both directors' control sockets report
 *                      the new version's content hash (what forwards packets)
 *   change -> shown    the same until GET /pools/{id}/sync says served by 2/2 (what operators see;
 *                      adds the agents' one-second report cadence)
 *   restart -> served  a director stopped and started with no table until it serves the console's
 *                      table again, with nobody touching the console or the agent
 *
 * 20 changes with the lab idle, 20 under client load (100 long-lived streams); p50/p95 of each.
 * Figures, not pass/fail: the machine is shared and noisy; compare within one run.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { CONSOLE_POOL_NAME, down, up, type ClientDriver, type Lab } from "@tide/lab";
import { ensureAgentBuild, requireRoot } from "../support/agent";
import { startStack, type Stack } from "../support/stack";

const CHANGES = Number(process.env.TIDE_BENCH_SYNC_CHANGES ?? 20);
const RESTARTS = Number(process.env.TIDE_BENCH_SYNC_RESTARTS ?? 5);
const POLL_MS = 10;
/** Its own namespace prefix: never the lab of a developer's `npm run up`. */
const PREFIX = "tide-fbench";

const pct = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
};
const fmt = (name: string, v: number[]) =>
  `${name.padEnd(42)} p50 ${pct(v, 0.5).toFixed(0).padStart(5)} ms  p95 ${pct(v, 0.95).toFixed(0).padStart(5)} ms  max ${Math.max(
    ...v,
  )
    .toFixed(0)
    .padStart(5)} ms  (n=${v.length})`;

async function api(stack: Stack, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${stack.baseURL}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
  return JSON.parse(text) as unknown;
}

/** An admin API token, through the sign-in form's endpoint and the tokens API as the seeded admin. */
async function adminToken(stack: Stack): Promise<string> {
  const signIn = await fetch(`${stack.baseURL}/api/auth/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email: stack.email, password: stack.password }),
    redirect: "manual",
  });
  const cookie = signIn.headers.get("set-cookie")?.split(";")[0];
  if (!cookie) throw new Error(`sign-in failed: HTTP ${signIn.status}`);
  const res = await fetch(`${stack.baseURL}/api/v1/tokens`, {
    method: "POST",
    headers: { cookie, "content-type": "application/json", origin: stack.baseURL },
    body: JSON.stringify({ name: "bench-fleet-sync", scopes: ["read", "operate", "admin"] }),
  });
  if (!res.ok) throw new Error(`POST /tokens: HTTP ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

/** Resolves with the time both directors' sockets serve `hash` for the lab pool. */
async function servedAt(lab: Lab, hash: string, deadline: number): Promise<number> {
  for (;;) {
    const hashes = await lab.tableHashes().catch(() => ({}) as Record<string, string | null>);
    const values = Object.values(hashes);
    if (values.length === lab.topology.directors.length && values.every((h) => h === hash)) return Date.now();
    if (Date.now() > deadline) throw new Error(`directors serve ${JSON.stringify(hashes)}, not ${hash}`);
    await sleep(POLL_MS);
  }
}

async function shownAt(stack: Stack, token: string, poolId: string, version: number, deadline: number) {
  for (;;) {
    const s = (await api(stack, token, "GET", `/pools/${poolId}/sync`)) as { version: number; done: boolean };
    if (s.version === version && s.done) return Date.now();
    if (Date.now() > deadline) throw new Error(`console does not show v${version} served by every director`);
    await sleep(POLL_MS * 5);
  }
}

async function changes(stack: Stack, token: string, lab: Lab, label: string) {
  const pool = ((await api(stack, token, "GET", "/pools")) as { id: string; name: string }[]).find(
    (p) => p.name === CONSOLE_POOL_NAME,
  )!;
  const proxies = (await api(stack, token, "GET", `/proxies?poolId=${pool.id}`)) as { id: string }[];
  const proxy = proxies[0]!.id;
  const served: number[] = [];
  const shown: number[] = [];
  for (let i = 0; i < CHANGES; i++) {
    const action = i % 2 === 0 ? "drain" : "activate";
    const t0 = Date.now();
    const r = (await api(stack, token, "POST", `/proxies/${proxy}/${action}`, { reason: "bench" })) as {
      tableVersion: { version: number; contentHash: string };
    };
    const deadline = t0 + 30_000;
    const [a, b] = await Promise.all([
      servedAt(lab, r.tableVersion.contentHash, deadline),
      shownAt(stack, token, pool.id, r.tableVersion.version, deadline),
    ]);
    served.push(a - t0);
    shown.push(b - t0);
    await sleep(300);
  }
  console.log(fmt(`change -> served (${label})`, served));
  console.log(fmt(`change -> shown in console (${label})`, shown));
}

async function restarts(lab: Lab) {
  const times: number[] = [];
  const director = lab.topology.directors[1]!.name;
  for (let i = 0; i < RESTARTS; i++) {
    const want = (await lab.tableHashes())[lab.topology.directors[0]!.name]!;
    await lab.stopDirector(director);
    await sleep(500);
    const t0 = Date.now();
    await lab.startDirector(director);
    const up = Date.now();
    const at = await servedAt(lab, want, t0 + 30_000);
    times.push(at - up);
    console.log(
      `  restart ${i + 1}: EAL start ${up - t0} ms, socket up -> console table served ${at - up} ms`,
    );
  }
  console.log(fmt("director restart -> served", times));
}

async function main() {
  requireRoot();
  ensureAgentBuild();
  const stack = await startStack();
  let lab: Lab | null = null;
  let driver: ClientDriver | null = null;
  try {
    const token = await adminToken(stack);
    const started = Date.now();
    lab = await up({
      prefix: PREFIX,
      fresh: true,
      redirect: true,
      console: { url: stack.baseURL, token, tokenFile: null },
    });
    console.log(`lab up in console mode, directors in sync: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await changes(stack, token, lab, "idle");
    driver = await lab.clientDriver();
    await driver.open(100, { intervalMs: 50 });
    await changes(stack, token, lab, "100 streams");
    await driver.close().catch(() => undefined);
    await restarts(lab);
  } finally {
    await driver?.stop().catch(() => undefined);
    await lab?.down().catch(() => undefined);
    await down({ prefix: PREFIX }).catch(() => undefined);
    await stack.stop();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
