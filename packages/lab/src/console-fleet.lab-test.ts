/**
 * The lab as a console-owned fleet, end to end: a throwaway PostgreSQL and the real console
 * (`next start` of its build), the lab brought up in console mode (REST registration, directors
 * started without a table, one real tide-agent per host), then:
 *  - every director serves the console's current version (GET /api/v1/sync, and the directors'
 *    own content hashes);
 *  - client traffic through the VIP works;
 *  - a drain over REST reaches both directors (the pool's sync shows 2/2 on the new version;
 *    the time it takes is printed, not asserted) while established streams keep echoing;
 *  - `up` again is idempotent: no new pool, proxy, director or live host token, and the drain stays.
 * Needs root (namespaces), dataplane/build (make -C dataplane), the agent bundle
 * (npm run build -w @tide/agent) and the console build (apps/console/.next).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CONSOLE_DIR,
  freePort,
  loadApiFixtures,
  migrate,
  startConsole,
  startTempCluster,
  stopConsole,
  waitFor,
  type TempCluster,
  type ConsoleProcess,
} from "@tide/devstack";
import { summarizeConnections, type ClientDriver } from "./client-driver";
import { ConsoleClient } from "./console/console-client";
import { labEnv, type ConsoleTarget, type LabEnvironment } from "./env";
import { listNamespaces } from "./host-command";
import { type Lab } from "./lab";
import { up } from "./lab-lifecycle";

const PREFIX = "tide-cfleet";
const STREAMS = 6;
const log = (line: string) => console.log(`[console-fleet] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the lab as a console-owned fleet", () => {
  let cluster: TempCluster | undefined;
  let db: Db | undefined;
  let server: ConsoleProcess | undefined;
  let lab: Lab | undefined;
  let driver: ClientDriver | undefined;
  let dir: string;
  let env: LabEnvironment;
  let target: ConsoleTarget;
  let client: ConsoleClient;

  beforeAll(async () => {
    if (process.getuid?.() !== 0)
      throw new Error("the lab tier needs root (network namespaces); CI runs it as root");
    for (const [file, how] of [
      [labEnv.directorBin, "make -C dataplane"],
      [labEnv.agentBundle, "npm run build -w @tide/agent"],
      [path.join(CONSOLE_DIR, ".next/BUILD_ID"), "npm run build -w @tide/console"],
    ] as const) {
      if (!existsSync(file)) throw new Error(`${file} is missing: ${how}`);
    }
    if ((await listNamespaces()).some((n) => n.startsWith(`${PREFIX}-`))) {
      throw new Error(`namespaces ${PREFIX}-* exist: another run of this test is going on or crashed`);
    }
    dir = mkdtempSync(path.join(tmpdir(), "tide-console-fleet-"));
    env = { ...labEnv, labRoot: path.join(dir, "lab") };
    cluster = await startTempCluster();
    await migrate(cluster.url, { quiet: true });
    db = createDb(cluster.url, { max: 2 });
    const { makeUser, callerFor } = await loadApiFixtures();
    const admin = await makeUser(db, "admin");
    const token = (await callerFor(db, admin).tokens.create({ name: "lab", scopes: [...admin.scopes] }))
      .token;
    const tokenFile = path.join(dir, "lab-token");
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    const port = await freePort();
    server = await startConsole(port, cluster.url);
    target = { url: `http://127.0.0.1:${port}`, token, tokenFile };
    client = new ConsoleClient(target.url, token);
  });

  afterAll(async () => {
    const errors: unknown[] = [];
    const step = async (f: () => unknown) => {
      try {
        await f();
      } catch (e) {
        errors.push(e);
      }
    };
    await step(() => driver?.stop());
    await step(() => lab?.down());
    await step(() => stopConsole(server));
    await step(() => db?.$disconnect());
    await step(() => cluster?.stop());
    await step(() => dir && rmSync(dir, { recursive: true, force: true }));
    const left = (await listNamespaces()).filter((n) => n.startsWith(`${PREFIX}-`));
    if (left.length > 0) errors.push(new Error(`namespaces left behind: ${left.join(", ")}`));
    if (errors.length > 0) throw errors[0];
  });

  it("registers, syncs, carries traffic, drains over REST and is idempotent", async () => {
    const t0 = Date.now();
    lab = await up({ prefix: PREFIX, console: target, env, log });
    log(`lab up in console mode in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const state = lab.consoleState!;
    expect(state.poolName).toBe("lab");

    // Every director serves the console's current version, per the console and per the directors.
    const pool = await client.getPool(state.poolId);
    expect(pool.proxies.map((p) => [p.hostname, p.address, p.state])).toEqual([
      ["lab-proxy-1", "10.100.11.2", "active"],
      ["lab-proxy-2", "10.100.12.2", "active"],
      ["lab-proxy-3", "10.100.13.2", "active"],
    ]);
    expect(pool.hashFields).toEqual(["src_addr", "src_port"]);
    expect(pool.directors.map((d) => d.hostname).sort()).toEqual(["lab-director-1", "lab-director-2"]);
    const current = pool.currentVersion!;
    const sync = (await lab.consoleSync())!;
    expect(sync.inSync).toBe(true);
    expect(sync.directors.map((d) => [d.hostname, d.state, d.servedVersion, d.desiredVersion])).toEqual([
      ["lab-director-1", "in_sync", current.version, current.version],
      ["lab-director-2", "in_sync", current.version, current.version],
    ]);
    expect(await lab.tableHashes()).toEqual({ dir1: current.contentHash, dir2: current.contentHash });
    // Host tokens are files only the owner reads.
    const agentsDir = path.join(lab.paths.dir, "agents");
    expect(readdirSync(agentsDir).sort()).toEqual([
      "lab-director-1",
      "lab-director-2",
      "lab-proxy-1",
      "lab-proxy-2",
      "lab-proxy-3",
    ]);

    // Client traffic through the VIP.
    driver = await lab.clientDriver();
    const opened = await driver.open(STREAMS);
    expect(opened.filter((c) => c.state === "open")).toHaveLength(STREAMS);
    const answered = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const r = await driver.http("/");
      expect(r.status).toBe(200);
      answered.add(r.proxy!);
    }
    log(
      `HTTP answered by ${[...answered].sort().join(", ")}; streams on ${JSON.stringify(summarizeConnections(opened).byProxy)}`,
    );

    // A drain over REST reaches both directors.
    const prx1 = state.proxies.prx1!.proxyId;
    const tDrain = Date.now();
    const drained = await client.proxyAction(prx1, "drain", "lab test");
    const done = await waitFor(
      "both directors to serve the drain's version",
      async () => {
        const s = await client.poolSync(state.poolId);
        return s.version === drained.tableVersion.version && s.servedBy === 2 && s.done ? s : undefined;
      },
      { timeoutMs: 30_000 },
    );
    const drainMs = Date.now() - tDrain;
    log(
      `drain v${drained.tableVersion.version} served by ${done.servedBy}/${done.directorCount} directors after ${drainMs} ms`,
    );
    expect(done.directorCount).toBe(2);
    expect(await lab.tableHashes()).toEqual({
      dir1: drained.tableVersion.contentHash,
      dir2: drained.tableVersion.contentHash,
    });
    // Established streams keep echoing (second chance) while new flows avoid prx1.
    const before = summarizeConnections(await driver.report());
    await sleep(2_000);
    const after = summarizeConnections(await driver.report());
    expect(after.byState.open).toBe(STREAMS);
    expect(after.errors).toEqual({});
    expect(after.echoed).toBeGreaterThan(before.echoed);

    // up again: reuses the running lab, registers nothing new, leaves the drain alone.
    const counts = async () => ({
      pools: (await client.listPools()).filter((p) => p.name === "lab").length,
      proxies: (await client.getPool(state.poolId)).proxies.length,
      directors: (await client.listDirectors()).length,
      liveTokens: (
        await Promise.all(
          ["lab-director-1", "lab-director-2", "lab-proxy-1", "lab-proxy-2", "lab-proxy-3"].map((h) =>
            client.listHostTokens(h),
          ),
        )
      )
        .flat()
        .filter((t) => t.revokedAt === null).length,
      version: (await client.getPool(state.poolId)).currentVersion!.version,
    });
    const countsBefore = await counts();
    expect(countsBefore).toEqual({
      pools: 1,
      proxies: 3,
      directors: 2,
      liveTokens: 5,
      version: drained.tableVersion.version,
    });
    const again = await up({ prefix: PREFIX, console: target, env, log });
    expect(again.stateSnapshot().createdAt).toBe(lab.stateSnapshot().createdAt);
    again.close();
    expect(await counts()).toEqual(countsBefore);
    expect((await client.getPool(state.poolId)).proxies.find((p) => p.id === prx1)!.state).toBe("draining");
  });
});
