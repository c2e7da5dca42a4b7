import { buildTable, decodeGlbd, encodeGlbd, tableContentHash, type ProxyState } from "@tide/forwarding";
import { describe, expect, it } from "vitest";
import { mergePoolTables, tablesInSync } from "./director-tables";

const key = (c: number) => Uint8Array.from({ length: 16 }, (_, i) => (i * 7 + c) & 0xff);

/** A 1-table GLBD file for a pool on its own VIP, as the console serves it. */
function poolFile(vip: string, proxies: string[], states: ProxyState[] = []) {
  const table = buildTable({
    hashKey: key(1),
    seed: key(2),
    binds: [{ address: vip, prefixBits: 32, proto: "tcp", portStart: 443, portEnd: 443 }],
    backends: proxies.map((address, i) => ({ address, state: states[i] ?? "active", healthy: true })),
  });
  const bytes = encodeGlbd([table]);
  return { bytes, contentHash: tableContentHash(bytes) };
}

const desired = (poolName: string, contentHash: string) => ({
  poolId: `pool_${poolName}`,
  poolName,
  tableVersionId: `tv_${poolName}`,
  contentHash,
  downloadPath: `/api/v1/pools/pool_${poolName}/tables/1/glbd`,
});

describe("director tables from per-pool files", () => {
  const web = poolFile("192.0.2.10", ["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
  const api = poolFile("192.0.2.20", ["10.0.1.1", "10.0.1.2"], ["active", "draining"]);

  it("merges pools in order; each table keeps its bytes, so its 1-table hash is unchanged", () => {
    const merged = mergePoolTables([
      { poolName: "web", ...web },
      { poolName: "api", ...api },
    ]);
    expect(merged.poolNames).toEqual(["web", "api"]);
    const tables = decodeGlbd(merged.bytes);
    expect(tables).toHaveLength(2);
    expect(tableContentHash(encodeGlbd([tables[0]!]))).toBe(web.contentHash);
    expect(tableContentHash(encodeGlbd([tables[1]!]))).toBe(api.contentHash);
    expect(tables[1]!.backends.map((b) => b.state)).toEqual(["active", "draining"]);
  });

  it("refuses a file that is not what the console said, duplicates and nothing", () => {
    const corrupt = Uint8Array.from(web.bytes);
    corrupt[100] = corrupt[100]! ^ 0xff;
    expect(() =>
      mergePoolTables([{ poolName: "web", contentHash: web.contentHash, bytes: corrupt }]),
    ).toThrow(/sha256/);
    expect(() =>
      mergePoolTables([
        { poolName: "web", ...web },
        { poolName: "web", ...web },
      ]),
    ).toThrow(/twice/);
    const two = encodeGlbd(
      decodeGlbd(
        mergePoolTables([
          { poolName: "web", ...web },
          { poolName: "api", ...api },
        ]).bytes,
      ),
    );
    expect(() =>
      mergePoolTables([{ poolName: "both", contentHash: tableContentHash(two), bytes: two }]),
    ).toThrow(/2 tables/);
    expect(() => mergePoolTables([])).toThrow(/no tables/);
  });

  it("is in sync only when the director serves exactly the desired pools and hashes", () => {
    const want = [desired("web", web.contentHash), desired("api", api.contentHash)];
    expect(tablesInSync(want, { web: web.contentHash, api: api.contentHash })).toBe(true);
    expect(tablesInSync(want, { web: web.contentHash })).toBe(false);
    expect(tablesInSync(want, { web: web.contentHash, api: web.contentHash })).toBe(false);
    expect(tablesInSync([want[0]!], { web: web.contentHash, api: api.contentHash })).toBe(false);
    expect(tablesInSync(want, {})).toBe(false);
  });
});
