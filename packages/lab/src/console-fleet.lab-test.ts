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
 * The console and the lab come from ConsoleLab (console/console-lab-harness.ts). Needs root
 * (namespaces), dataplane/build (make -C dataplane), the agent bundle (npm run build -w
 * @tide/agent) and the console build (apps/console/.next).
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "@tide/devstack";
import { summarizeConnections, type ClientDriver } from "./client-driver";
import { ConsoleLab } from "./console/console-lab-harness";
import { type ConsoleClient } from "./console/console-client";
import { type Lab } from "./lab";
import { up } from "./lab-lifecycle";

const PREFIX = "tide-cfleet";
const STREAMS = 6;
const log = (line: string) => console.log(`[console-fleet] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the lab as a console-owned fleet", () => {
  let h: ConsoleLab | undefined;
  let lab: Lab | undefined;
  let driver: ClientDriver | undefined;
  let client: ConsoleClient;

  beforeAll(async () => {
    h = await ConsoleLab.start({ prefix: PREFIX, tmpName: "tide-console-fleet-", log });
    client = h.client();
  });

  afterAll(async () => {
    try {
      await driver?.stop();
    } finally {
      await h?.close();
    }
  });

  it("registers, syncs, carries traffic, drains over REST and is idempotent", async () => {
    lab = await h!.up();
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
        return s.version === drained.tableVersion!.version && s.servedBy === 2 && s.done ? s : undefined;
      },
      { timeoutMs: 30_000 },
    );
    const drainMs = Date.now() - tDrain;
    log(
      `drain v${drained.tableVersion!.version} served by ${done.servedBy}/${done.directorCount} directors after ${drainMs} ms`,
    );
    expect(done.directorCount).toBe(2);
    expect(await lab.tableHashes()).toEqual({
      dir1: drained.tableVersion!.contentHash,
      dir2: drained.tableVersion!.contentHash,
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
      version: drained.tableVersion!.version,
    });
    const again = await up({ prefix: PREFIX, console: h!.target, env: h!.env, log });
    expect(again.stateSnapshot().createdAt).toBe(lab.stateSnapshot().createdAt);
    again.close();
    expect(await counts()).toEqual(countsBefore);
    expect((await client.getPool(state.poolId)).proxies.find((p) => p.id === prx1)!.state).toBe("draining");
  });
});
