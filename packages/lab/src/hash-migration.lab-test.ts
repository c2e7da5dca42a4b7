/**
 * A hash-field change with connections flowing breaks none (issue 26): the lab in console mode
 * (ConsoleLab: a throwaway PostgreSQL, the real console, one tide-agent per host), 100 echo streams
 * through the VIP, then the pool's hash fields change from src_addr+src_port to src_addr over REST.
 * The new table carries the old fields as alt_hash_fields, so a stream whose new row belongs to
 * other proxies reaches its own proxy as an extra hop: every stream keeps echoing, tide-redirect
 * counts those packets as accepted_alternate_hash and takes none by last resort (the kernel's
 * reset). Then the streams end and the migration is finished over REST: the next table drops the
 * old fields. Needs root, dataplane/build, the agent bundle and the console build.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PoolChangeResult } from "@tide/contracts";
import { waitFor } from "@tide/devstack";
import { summarizeConnections, type ClientDriver } from "./client-driver";
import { ConsoleLab } from "./console/console-lab-harness";
import { type Lab } from "./lab";

const PREFIX = "tide-hmig";
const STREAMS = 100;
const log = (line: string) => console.log(`[hash-migration] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a hash-field change in the lab", () => {
  let h: ConsoleLab | undefined;
  let lab: Lab | undefined;
  let driver: ClientDriver | undefined;

  beforeAll(async () => {
    h = await ConsoleLab.start({ prefix: PREFIX, tmpName: "tide-hash-migration-", log });
  });

  afterAll(async () => {
    try {
      await driver?.stop();
    } finally {
      await h?.close();
    }
  });

  async function counters() {
    const out: Record<string, { alternate: number; lastResort: number; secondChance: number }> = {};
    for (const p of lab!.proxies) {
      const c = await lab!.redirectControl(p).counters();
      out[p] = {
        alternate: c.accepted_alternate_hash ?? Number.NaN,
        lastResort: c.accepted_last_resort,
        secondChance: c.accepted_second_chance ?? Number.NaN,
      };
    }
    return out;
  }

  const sum = (o: Record<string, Record<string, number>>, k: string) =>
    Object.values(o).reduce((s, v) => s + v[k]!, 0);

  it("keeps 100 streams through the change (0 resets) and finishes the migration", async () => {
    lab = await h!.up();
    const client = h!.client();
    const poolId = lab.consoleState!.poolId;
    expect((await client.getPool(poolId)).hashFields).toEqual(["src_addr", "src_port"]);

    driver = await lab.clientDriver();
    const opened = await driver.open(STREAMS);
    expect(opened.filter((c) => c.state === "open")).toHaveLength(STREAMS);
    log(`streams by proxy: ${JSON.stringify(summarizeConnections(opened).byProxy)}`);
    const before = await counters();

    // src_addr only: every stream of the lab's one client address now hashes to one row, so the
    // streams on the other proxies reach theirs only through the alternate hash.
    const changed = await h!.rest("PUT", `/pools/${poolId}/hash-fields`, PoolChangeResult, {
      hashFields: ["src_addr"],
      reason: "lab: hash-field migration test",
    });
    expect(changed.pool.hashMigration).toMatchObject({ from: ["src_addr", "src_port"], to: ["src_addr"] });
    const version = changed.tableVersion!.version;
    await waitFor(
      "both directors to serve the migrating version",
      async () => {
        const s = await client.poolSync(poolId);
        return s.version === version && s.servedBy === 2 ? s : undefined;
      },
      { timeoutMs: 30_000 },
    );
    const served = await lab.tableHashes();
    expect(served).toEqual({
      dir1: changed.tableVersion!.contentHash,
      dir2: changed.tableVersion!.contentHash,
    });

    const echoedBefore = summarizeConnections(await driver.report()).echoed;
    await sleep(3_000);
    const during = summarizeConnections(await driver.report());
    expect(during.byState.open).toBe(STREAMS);
    expect(during.errors).toEqual({});
    expect(during.echoed).toBeGreaterThan(echoedBefore);
    const after = await counters();
    const alternate = sum(after, "alternate") - sum(before, "alternate");
    const lastResort = sum(after, "lastResort") - sum(before, "lastResort");
    log(`through the change: ${alternate} packets by the alternate hash, ${lastResort} by last resort`);
    expect(alternate).toBeGreaterThan(0);
    expect(lastResort).toBe(0);

    // The streams end; finishing then resets nothing, and the next table drops the old fields.
    const closed = summarizeConnections(await driver.close());
    expect(closed.errors).toEqual({});
    const finished = await h!.rest(
      "POST",
      `/pools/${poolId}/hash-fields/migration/finish`,
      PoolChangeResult,
      { reason: "lab: streams ended" },
    );
    expect(finished.pool.hashMigration).toBeNull();
    await waitFor(
      "both directors to serve the finished version",
      async () => {
        const s = await client.poolSync(poolId);
        return s.version === finished.tableVersion!.version && s.servedBy === 2 ? s : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(await lab.tableHashes()).toEqual({
      dir1: finished.tableVersion!.contentHash,
      dir2: finished.tableVersion!.contentHash,
    });
  });
});
