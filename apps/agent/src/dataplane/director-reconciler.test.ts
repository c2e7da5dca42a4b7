import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { buildTable, decodeGlbd, encodeGlbd, tableContentHash } from "@tide/forwarding";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DirectorServed } from "./data-plane-state";
import { DirectorReconciler } from "./director-reconciler";

/**
 * The reconciler's decisions against a scripted director (what `status` says, what `load_table`
 * does); the real director is in director-tables.lab-test.ts.
 */

const key = (c: number) => Uint8Array.from({ length: 16 }, (_, i) => (i * 3 + c) & 0xff);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "tide-reconciler-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function poolFile(name: string, proxies: string[]) {
  const bytes = encodeGlbd([
    buildTable({
      hashKey: key(name.length),
      seed: key(9),
      binds: [{ address: "192.0.2.10", prefixBits: 32, proto: "tcp", portStart: 80, portEnd: 80 }],
      backends: proxies.map((address) => ({ address, state: "active" as const, healthy: true })),
    }),
  ]);
  const contentHash = tableContentHash(bytes);
  const file = path.join(dir, `src-${contentHash}`);
  writeFileSync(file, bytes);
  return {
    file,
    desired: {
      poolId: `pool_${name}`,
      poolName: name,
      tableVersionId: "tv_0000",
      contentHash,
      downloadPath: `/x/${contentHash}`,
    },
  };
}

/** A director that serves whatever it last loaded, and can be "restarted" (serves nothing). */
function scriptedDirector() {
  const d = {
    reachable: true,
    served: {} as Record<string, string>,
    loads: 0,
    failNextLoad: false,
    async status(): Promise<DirectorServed> {
      return d.reachable
        ? { reachable: true, error: null, tableHashes: { ...d.served } }
        : { reachable: false, error: "connect ECONNREFUSED", tableHashes: {} };
    },
    async load(file: string, poolNames: string[]) {
      if (d.failNextLoad) {
        d.failNextLoad = false;
        throw new Error("load_table: io_error: cannot open");
      }
      d.loads++;
      const tables = decodeGlbd(readFileSync(file));
      d.served = Object.fromEntries(poolNames.map((n, i) => [n, tableContentHash(encodeGlbd([tables[i]!]))]));
      return { generation: d.loads, tableHashes: { ...d.served } };
    },
  };
  return d;
}

function reconciler(
  director: ReturnType<typeof scriptedDirector>,
  files: Map<string, string>,
  log: string[],
) {
  const tableDir = path.join(dir, "tables");
  return new DirectorReconciler({
    socket: "/nonexistent",
    tableDir,
    served: () => director.status(),
    load: (file, names) => director.load(file, names),
    download: async (t) => {
      mkdirSync(tableDir, { recursive: true });
      const to = path.join(tableDir, `${t.contentHash}.glbd`);
      copyFileSync(files.get(t.contentHash)!, to);
      return to;
    },
    log: (l) => log.push(l),
  });
}

describe("DirectorReconciler", () => {
  it("loads what differs, then leaves an in-sync director alone", async () => {
    const web = poolFile("web", ["10.0.0.1", "10.0.0.2"]);
    const files = new Map([[web.desired.contentHash, web.file]]);
    const director = scriptedDirector();
    const log: string[] = [];
    const r = reconciler(director, files, log);
    r.setDesired(3, [web.desired]);
    await r.checkNow();
    expect(director.served).toEqual({ web: web.desired.contentHash });
    expect(r.state).toMatchObject({ revision: 3, inSync: true, reloads: 1, lastError: null });
    await r.checkNow();
    await r.checkNow();
    expect(director.loads).toBe(1);
    expect(log.join("\n")).toMatch(/desired revision 3: director served nothing; now serves web/);
  });

  it("repairs a director that restarted with its own table or none, without a new desired state", async () => {
    const web = poolFile("web", ["10.0.0.1", "10.0.0.2"]);
    const stale = poolFile("web", ["10.0.0.1", "10.0.0.3"]);
    const files = new Map([[web.desired.contentHash, web.file]]);
    const director = scriptedDirector();
    const r = reconciler(director, files, []);
    r.setDesired(1, [web.desired]);
    await r.checkNow();
    // Restart: unreachable while it starts (no load is tried), then up with its old file.
    director.reachable = false;
    director.served = {};
    await r.checkNow();
    expect(r.state.inSync).toBe(false);
    expect(director.loads).toBe(1);
    director.reachable = true;
    director.served = { web: stale.desired.contentHash };
    await r.checkNow();
    expect(director.served).toEqual({ web: web.desired.contentHash });
    expect(r.state.reloads).toBe(2);
  });

  it("backs off after a failed load and reports the error, then succeeds", async () => {
    const web = poolFile("web", ["10.0.0.1", "10.0.0.2"]);
    const director = scriptedDirector();
    director.failNextLoad = true;
    const log: string[] = [];
    const r = reconciler(director, new Map([[web.desired.contentHash, web.file]]), log);
    r.setDesired(1, [web.desired]);
    await r.checkNow();
    expect(r.state.lastError).toMatch(/io_error/);
    expect(log.join("\n")).toMatch(/load failed .*retry in \d+ ms/);
    await r.checkNow(); // inside the backoff: no attempt
    expect(director.loads).toBe(0);
    r.setDesired(2, [web.desired]); // a new desired state retries at once
    await r.checkNow();
    expect(director.served).toEqual({ web: web.desired.contentHash });
    expect(r.state.lastError).toBeNull();
  });

  it("keeps only the files the desired state needs in the table directory", async () => {
    const v1 = poolFile("web", ["10.0.0.1", "10.0.0.2"]);
    const v2 = poolFile("web", ["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
    const files = new Map([
      [v1.desired.contentHash, v1.file],
      [v2.desired.contentHash, v2.file],
    ]);
    const director = scriptedDirector();
    const r = reconciler(director, files, []);
    r.setDesired(1, [v1.desired]);
    await r.checkNow();
    writeFileSync(path.join(dir, "tables", "unrelated.txt"), "kept: not a table");
    r.setDesired(2, [v2.desired]);
    await r.checkNow();
    const left = readdirSync(path.join(dir, "tables")).sort();
    expect(left).toContain(`${v2.desired.contentHash}.glbd`);
    expect(left).not.toContain(`${v1.desired.contentHash}.glbd`);
    expect(left.filter((f) => f.startsWith("director-"))).toHaveLength(1);
    expect(left).toContain("unrelated.txt");
  });

  it("does not apply an empty desired set: the director keeps forwarding what it has", async () => {
    const director = scriptedDirector();
    director.served = { web: "a".repeat(64) };
    const r = reconciler(director, new Map(), []);
    r.setDesired(5, []);
    await r.checkNow();
    expect(director.loads).toBe(0);
    expect(director.served).toEqual({ web: "a".repeat(64) });
  });
});
