/** The table commands run in-process against the shared goldens. */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeGlbd, encodeGlbd, explainFlow, TABLE_ROWS } from "@tide/forwarding";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { golden } from "../../__fixtures__/paths";
import { runCli } from "../../cli";

let dir = "";
let out = "";
let err = "";
const io = () => ({
  stdout: (t: string) => void (out += t),
  stderr: (t: string) => void (err += t),
  cwd: dir,
});
const run = (...argv: string[]) => runCli(argv, io());

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "tidectl-test-"));
  out = "";
  err = "";
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("tidectl table build", () => {
  it.each(["table", "golden-drain", "golden-unhealthy", "golden-inactive"])(
    "rebuilds %s.bin byte-for-byte",
    async (name) => {
      for (const variant of ["tide", "glb"]) {
        const target = `${name}-${variant}.bin`;
        expect(await run("table", "build", golden(`${name}.json`), target, "--variant", variant)).toBe(0);
        const built = await readFile(join(dir, target));
        expect(built.equals(await readFile(golden(`${name}.bin`)))).toBe(true);
      }
      expect(out).toMatch(/sha256 [0-9a-f]{64}/);
    },
  );

  it.each([
    ["broken JSON", "{ not json", /invalid glb table JSON: \$: not valid JSON/],
    [
      "a bad state",
      JSON.stringify({
        tables: [
          {
            hash_key: "00".repeat(16),
            seed: "00".repeat(16),
            binds: [],
            backends: [{ ip: "10.0.0.1", state: "up", healthy: true }],
          },
        ],
      }),
      /tables\[0\]\.backends\[0\]\.state/,
    ],
  ])("fails on %s with exit 1, a message, and no output file", async (_what, text, message) => {
    await writeFile(join(dir, "in.json"), text);
    expect(await run("table", "build", "in.json", "out.bin")).toBe(1);
    expect(err).toMatch(message);
    expect(await readdir(dir)).toEqual(["in.json"]);
  });

  it("keeps an existing output file when the build fails", async () => {
    await writeFile(join(dir, "in.json"), "[]");
    await writeFile(join(dir, "out.bin"), "old");
    expect(await run("table", "build", "in.json", "out.bin")).toBe(1);
    expect(await readFile(join(dir, "out.bin"), "utf8")).toBe("old");
    expect((await readdir(dir)).sort()).toEqual(["in.json", "out.bin"]);
  });

  it("fails with exit 1 when the input is missing, and exit 2 on bad usage", async () => {
    expect(await run("table", "build", "missing.json", "out.bin")).toBe(1);
    expect(err).toMatch(/cannot read JSON file missing\.json: ENOENT/);
    expect(await run("table", "build", golden("table.json"))).toBe(2);
    expect(await run("table", "build", golden("table.json"), "o.bin", "--variant", "fast")).toBe(2);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe("tidectl table explain", () => {
  it("reproduces the reference vector", async () => {
    expect(
      await run(
        "table",
        "explain",
        golden("table.bin"),
        "--table",
        "0",
        "--src",
        "10.11.12.13:45678",
        "--json",
      ),
    ).toBe(0);
    expect(JSON.parse(out)).toMatchObject({
      digest: "008972f1657a5cbd",
      row: 0x5cbd,
      primary: "3.4.5.6",
      secondary: "2.3.4.5",
      outerSourcePort: 61139,
    });
  });

  it.each([
    ["45678", "1.2.3.4", "2.3.4.5"],
    ["45679", "1.2.3.4", "3.4.5.6"],
    ["45680", "2.3.4.5", "3.4.5.6"],
  ])("uses src_port when asked (%s)", async (port, primary, secondary) => {
    expect(
      await run(
        "table",
        "explain",
        golden("table.bin"),
        "--src",
        `10.11.12.13:${port}`,
        "--fields",
        "src_addr,src_port",
      ),
    ).toBe(0);
    expect(out).toMatch(new RegExp(`primary\\s+${primary.replace(/\./g, "\\.")}\\n`));
    expect(out).toMatch(new RegExp(`secondary\\s+${secondary.replace(/\./g, "\\.")}\\n`));
  });

  it("accepts IPv6 as [addr]:port and rejects bad input", async () => {
    expect(
      await run(
        "table",
        "explain",
        golden("table.bin"),
        "--table",
        "1",
        "--src",
        "[2001:db8::1]:443",
        "--json",
      ),
    ).toBe(0);
    expect(JSON.parse(out).srcAddr).toBe("2001:db8::1");
    expect(await run("table", "explain", golden("table.bin"), "--table", "2", "--src", "10.0.0.1")).toBe(2);
    expect(await run("table", "explain", golden("table.bin"), "--src", "10.0.0.300")).toBe(2);
    expect(
      await run("table", "explain", golden("table.bin"), "--src", "10.0.0.1", "--fields", "src_port"),
    ).toBe(2);
    expect(await run("table", "explain", golden("table.json"), "--src", "10.0.0.1")).toBe(1);
    expect(err).toMatch(/not a valid GLBD table file.*\[bad_magic\]/);
  });
});

interface GlbJson {
  tables: {
    hash_key: string;
    binds: { ip: string; proto: string; port?: number }[];
    backends: { ip: string; state: string; healthy: boolean }[];
  }[];
}
const goldenSpec = async (name: string) => JSON.parse(await readFile(golden(name), "utf8")) as GlbJson;

describe("tidectl table diff", () => {
  it("reports the rows the drain moved, against the same JSON with the proxy active", async () => {
    const spec = await goldenSpec("golden-drain.json");
    const drained = spec.tables[0]!.backends.find((b) => b.state === "draining")!;
    drained.state = "active";
    await writeFile(join(dir, "active.json"), JSON.stringify(spec));
    expect(await run("table", "build", "active.json", "active.bin")).toBe(0);
    out = "";
    expect(await run("table", "diff", "active.bin", golden("golden-drain.bin"), "--json", "--rows")).toBe(0);
    const [d] = JSON.parse(out) as {
      primaryChanged: { count: number; rows: number[] };
      secondaryChanged: { count: number; rows: number[] };
      proxies: {
        address: string;
        before: { primary: number; secondary: number };
        after: { primary: number; secondary: number };
      }[];
    }[];

    // Expected: exactly the rows where the proxy is primary while active.
    const [activeTable] = decodeGlbd(new Uint8Array(await readFile(join(dir, "active.bin"))));
    const idx = activeTable!.backends.findIndex((b) => b.address === drained.ip);
    const expected: number[] = [];
    for (let r = 0; r < TABLE_ROWS; r++) if (activeTable!.primary[r] === idx) expected.push(r);
    expect(expected.length).toBeGreaterThan(4000);
    expect(d!.primaryChanged.rows).toEqual(expected);
    expect(d!.secondaryChanged.rows).toEqual(expected);
    const share = d!.proxies.find((p) => p.address === drained.ip)!;
    expect(share.after.primary).toBe(0);
    expect(share.after.secondary - share.before.secondary).toBe(d!.primaryChanged.count);

    out = "";
    expect(await run("table", "diff", "active.bin", golden("golden-drain.bin"))).toBe(0);
    expect(out).toContain(`primary changed in ${expected.length} of 65536 rows`);
    expect(out).toContain(
      `backend ${drained.ip}: active, healthy -> draining, healthy (${expected.length} rows change primary to or from it)`,
    );
  });

  it("reports nothing for identical files", async () => {
    expect(
      await run(
        "table",
        "diff",
        golden("golden-drain.bin"),
        golden("golden-drain.bin"),
        "--table",
        "0",
        "--json",
      ),
    ).toBe(0);
    const [d] = JSON.parse(out);
    expect(d).toMatchObject({
      primaryChanged: { count: 0 },
      hashKeyChanged: false,
      flowsMoved: null,
      binds: { added: [], removed: [] },
      statusChanges: [],
    });
    out = "";
    expect(await run("table", "diff", golden("golden-drain.bin"), golden("golden-drain.bin"))).toBe(0);
    expect(out).toContain("primary changed in 0 of 65536 rows");
    expect(out).not.toMatch(/hash key|bind|backend /);
  });

  it("reports a new hash key: no row changes, most flows move", async () => {
    const spec = await goldenSpec("golden-drain.json");
    spec.tables[0]!.hash_key = "f0".repeat(16);
    await writeFile(join(dir, "rekeyed.json"), JSON.stringify(spec));
    expect(await run("table", "build", "rekeyed.json", "rekeyed.bin")).toBe(0);
    out = "";
    expect(await run("table", "diff", golden("golden-drain.bin"), "rekeyed.bin", "--json")).toBe(0);
    const [d] = JSON.parse(out);
    expect(d.primaryChanged.count).toBe(0);
    expect(d.hashKeyChanged).toBe(true);
    expect(d.flowsMoved.sampled).toBe(10_000);
    // A flow on an independent row keeps its proxy with probability sum(primary share^2).
    const [t] = decodeGlbd(new Uint8Array(await readFile(golden("golden-drain.bin"))));
    const counts = new Array<number>(t!.backends.length).fill(0);
    for (let r = 0; r < TABLE_ROWS; r++) counts[t!.primary[r]!]!++;
    const expected = 1 - counts.reduce((sum, c) => sum + (c / TABLE_ROWS) ** 2, 0);
    expect(Math.abs(d.flowsMoved.fraction - expected)).toBeLessThan(0.03);
    out = "";
    expect(await run("table", "diff", golden("golden-drain.bin"), "rekeyed.bin")).toBe(0);
    expect(out).toContain("primary changed in 0 of 65536 rows");
    expect(out).toContain(
      `hash key changed: flows move to other rows even where no row changed; about ${(d.flowsMoved.fraction * 100).toFixed(2)}% of flows change primary proxy (${d.flowsMoved.moved} of 10000 sampled client flows)`,
    );
  });

  it("reports binds, backends and a health change that moves no rows", async () => {
    const spec = await goldenSpec("golden-drain.json");
    const t = spec.tables[0]!;
    // The draining proxy is nowhere primary: marking it unhealthy moves no row.
    t.backends.find((b) => b.state === "draining")!.healthy = false;
    const removedBind = t.binds.shift()!;
    t.binds.push({ ip: "198.51.100.7", proto: "udp", port: 53 });
    const removedBackend = t.backends.pop()!;
    await writeFile(join(dir, "changed.json"), JSON.stringify(spec));
    expect(await run("table", "build", "changed.json", "changed.bin")).toBe(0);
    out = "";
    expect(await run("table", "diff", golden("golden-drain.bin"), "changed.bin")).toBe(0);
    expect(out).toContain("bind added: udp 198.51.100.7/32:53\n");
    expect(out).toContain(`bind removed: ${removedBind.proto} ${removedBind.ip}/32:${removedBind.port}\n`);
    expect(out).toContain(`backend removed: ${removedBackend.ip}\n`);
    expect(out).toContain("backend 10.20.0.13: draining, healthy -> draining, unhealthy (moves no rows)");
    expect(out).not.toContain("hash key changed");
  });

  it("explains a GLBD v3 table on its own hash fields unless --fields says otherwise", async () => {
    const [t] = decodeGlbd(new Uint8Array(await readFile(golden("golden-drain.bin"))));
    const table = { ...t!, hashFields: ["src_addr", "src_port"] as const, altHashFields: [] };
    await writeFile(join(dir, "port.bin"), encodeGlbd([{ ...table, hashFields: [...table.hashFields] }]));
    const rows = new Set<number>();
    for (const port of [40000, 40001, 40002, 40003]) {
      out = "";
      expect(await run("table", "explain", "port.bin", "--src", `10.11.12.13:${port}`, "--json")).toBe(0);
      const r = JSON.parse(out) as { fields: string[]; row: number };
      expect(r.fields).toEqual(["src_addr", "src_port"]);
      expect(r.row).toBe(
        explainFlow(
          { ...table, hashFields: [...table.hashFields] },
          { srcAddr: "10.11.12.13", srcPort: port },
        ).row,
      );
      rows.add(r.row);
    }
    expect(rows.size).toBeGreaterThan(1); // the port is hashed: one client, several rows
    out = "";
    expect(
      await run(
        "table",
        "explain",
        "port.bin",
        "--src",
        "10.11.12.13:40000",
        "--fields",
        "src_addr",
        "--json",
      ),
    ).toBe(0);
    expect((JSON.parse(out) as { fields: string[] }).fields).toEqual(["src_addr"]);
  });

  it("reports changed hash fields of GLBD v3 files like a key change", async () => {
    const [t] = decodeGlbd(new Uint8Array(await readFile(golden("golden-drain.bin"))));
    await writeFile(
      join(dir, "src.bin"),
      encodeGlbd([{ ...t!, hashFields: ["src_addr"], altHashFields: [] }]),
    );
    await writeFile(
      join(dir, "port.bin"),
      encodeGlbd([{ ...t!, hashFields: ["src_addr", "src_port"], altHashFields: ["src_addr"] }]),
    );
    expect(await run("table", "diff", "src.bin", "port.bin")).toBe(0);
    expect(out).toContain("primary changed in 0 of 65536 rows");
    expect(out).toMatch(
      /hash fields changed: src_addr -> src_addr,src_port; flows move to other rows; about \d+\.\d\d% of flows change primary proxy/,
    );
    expect(out).toContain("alternate hash fields changed: none -> src_addr");
    expect(out).not.toContain("hash key changed");
  });

  it("reports the table count when the files differ in it, and compares the common tables", async () => {
    expect(await run("table", "diff", golden("golden-drain.bin"), golden("table.bin"))).toBe(0);
    expect(out).toContain("table count changed: 1 -> 2; table(s) 1 only in");
    expect(out).toMatch(/table 0: primary changed in \d+ of 65536 rows/);
    expect(out).not.toMatch(/^table 1:/m);
    out = "";
    expect(await run("table", "diff", golden("golden-drain.bin"), golden("table.bin"), "--json")).toBe(0);
    const json = JSON.parse(out) as { table: number; only?: string }[];
    expect(json.map((x) => [x.table, x.only])).toEqual([
      [0, undefined],
      [1, "b"],
    ]);
    expect(await run("table", "diff", golden("golden-drain.bin"), golden("table.bin"), "--table", "1")).toBe(
      2,
    );
    expect(await run("table", "diff", golden("golden-drain.bin"))).toBe(2);
    expect(await run("table", "diff", "missing.bin", golden("table.bin"))).toBe(1);
  });

  it("says in its help that a seed change shows as rows changed", async () => {
    expect(await run("table", "diff", "--help")).toBe(0);
    expect(out).toMatch(/seed is not stored[\s\S]*rows whose proxies changed/);
  });
});

describe("tidectl usage", () => {
  it("prints help with exit 0 and rejects unknown commands and options with exit 2", async () => {
    expect(await run("--help")).toBe(0);
    expect(out).toContain("tidectl table build");
    expect(await run("table", "diff", "--help")).toBe(0);
    expect(out).toContain("Usage: tidectl table diff");
    expect(await run()).toBe(2);
    expect(await run("tabel")).toBe(2);
    expect(await run("table", "frobnicate")).toBe(2);
    expect(await run("table", "show", "x.bin", "--verbose")).toBe(2);
    expect(err).toMatch(/Unknown option '--verbose'/);
  });

  it("shows a table file", async () => {
    expect(await run("table", "show", golden("golden-inactive.bin"), "--json")).toBe(0);
    const shown = JSON.parse(out);
    expect(shown.tables[0].backends[5]).toMatchObject({
      address: "10.20.0.15",
      state: "inactive",
      primaryRows: 0,
    });
    expect(shown.tables[0].binds[1]).toMatchObject({
      address: "203.0.113.64",
      prefixBits: 26,
      portStart: 8000,
      portEnd: 8099,
    });
  });
});
