/**
 * tidectl version list / report against the real REST handler and the integration tier's
 * throwaway PostgreSQL (as host-commands.integration-test.ts): a drain's version has a report the
 * commands find by v<N>, <N>, tv_… or as the newest.
 */
import { newId } from "@tide/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTidectlHarness, type TidectlHarness } from "./testing/api-harness";

let h: TidectlHarness;
const tag = newId("pool").slice(-6);
const poolName = `ver-${tag}`;
const tidectl = (...argv: string[]) => h.tidectl(...argv);

beforeAll(async () => {
  h = await startTidectlHarness(`version-${tag}`, { TIDE_URL: "http://tide.test:3000" });
  const caller = h.caller;
  const pool = await caller.pools.create({
    name: poolName,
    hashFields: ["src_addr"],
    binds: [{ address: "198.51.100.44", proto: "tcp", portStart: 443 }],
  });
  const proxies = [];
  for (const i of [1, 2, 3])
    proxies.push(
      await caller.proxies.create({
        poolId: pool.id,
        address: `10.98.7.${i}`,
        hostname: `${poolName}-proxy-${i}`,
      }),
    );
  // v1..v3 from the proxies, v4 the drain.
  await caller.proxies.drain({ proxyId: proxies[0]!.id, reason: "cli version test" });
});
afterAll(async () => {
  await h.close();
});

describe("tidectl version", () => {
  it("lists the pool's versions with their reports' state", async () => {
    const r = await tidectl("version", "list", poolName);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const lines = r.out.split("\n");
    expect(lines[0]).toMatch(/^version\s+connections\s+cause/);
    // No reporter runs in this test: every report still measures.
    expect(lines[1]).toMatch(/^v4\s+measuring\s+drain /);
    expect(lines[2]).toMatch(/^v3\s+measuring\s+/);
  });

  it("prints a version's report by v<N>, <N>, id, or the newest, and refuses a bad version", async () => {
    const newest = await tidectl("version", "report", poolName);
    expect(newest.code).toBe(0);
    expect(newest.out).toMatch(/^v4 \(tv_[a-z0-9]+\): measuring, opened /);
    expect(newest.out).toContain("predicted: 0 broken");
    const id = /\((tv_[a-z0-9]+)\)/.exec(newest.out)![1]!;
    for (const ref of ["v4", "4", id])
      expect((await tidectl("version", "report", poolName, ref)).out).toBe(newest.out);
    const json = await tidectl("version", "report", poolName, "v4", "--json");
    expect(JSON.parse(json.out)).toMatchObject({ tableVersionId: id, status: "measuring", report: null });
    const bad = await tidectl("version", "report", poolName, "v99");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("no v99");
    expect((await tidectl("version", "report", poolName, "--wait", "x")).code).toBe(2);
  });
});
