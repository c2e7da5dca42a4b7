/** One real process: the esbuild bundle (rebuilt here so it matches the sources). */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { copyFile, cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { bundlePath, golden, repoRoot } from "./__fixtures__/paths";

const fixtures = join(dirname(fileURLToPath(import.meta.url)), "__fixtures__");
/** A declaration only packages/forwarding has (its SipHash block loop): forwarding code is here. */
const FORWARDING_MARK = "function sipBlocks(";

const chunksDir = () => join(dirname(bundlePath), "tidectl-chunks");
const chunkFiles = async (dir = chunksDir()) => (await readdir(dir)).filter((f) => f.endsWith(".cjs"));

/** Chunks (file names) of `distDir`'s tidectl-chunks/ whose text holds `mark`. */
async function holdingIn(distDir: string, mark: RegExp | string): Promise<string[]> {
  const dir = join(distDir, "tidectl-chunks");
  const found = [];
  for (const c of await chunkFiles(dir)) {
    const text = await readFile(join(dir, c), "utf8");
    if (typeof mark === "string" ? text.includes(mark) : mark.test(text)) found.push(c);
  }
  return found;
}

/** A copy of dist/ in a temporary directory, to delete files from. */
async function copyOfDist(): Promise<{ dir: string; entry: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "tidectl-copy-"));
  await cp(dirname(bundlePath), dir, { recursive: true });
  return {
    dir,
    entry: join(dir, basename(bundlePath)),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

beforeAll(() => {
  execFileSync("npm", ["run", "-w", "@tide/tidectl", "build"], { cwd: repoRoot, stdio: "pipe" });
  if (!existsSync(bundlePath))
    throw new Error(`npm run -w @tide/tidectl build did not produce ${bundlePath}`);
}, 60_000);

describe("dist/tidectl.js", () => {
  it("has the shebang; its chunks do not (lintian: a #! file must be executable)", async () => {
    expect((await readFile(bundlePath, "utf8")).startsWith("#!/usr/bin/env node\n")).toBe(true);
    const chunks = await chunkFiles();
    expect(chunks.length).toBeGreaterThan(0);
    for (const chunk of chunks) {
      expect((await readFile(join(chunksDir(), chunk), "utf8")).startsWith("#!"), chunk).toBe(false);
    }
  });

  it("builds a golden table and explains a flow as a separate process", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tidectl-bundle-"));
    try {
      const out = join(dir, "t.bin");
      const build = spawnSync(process.execPath, [bundlePath, "table", "build", golden("table.json"), out], {
        encoding: "utf8",
      });
      expect(build.stderr).toBe("");
      expect(build.status).toBe(0);
      expect((await readFile(out)).equals(await readFile(golden("table.bin")))).toBe(true);
      const explain = spawnSync(
        process.execPath,
        [bundlePath, "table", "explain", out, "--src", "10.11.12.13:45678", "--json"],
        {
          encoding: "utf8",
        },
      );
      expect(explain.status).toBe(0);
      expect(JSON.parse(explain.stdout)).toMatchObject({
        row: 0x5cbd,
        outerSourcePort: 61139,
        primary: "3.4.5.6",
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("is CommonJS: the entry, and chunks that say so by their extension", async () => {
    // Node 20's ES module loader costs ~9 ms of CPU at start (issue 28: --help within 15 ms of
    // bare node). dist/package.json overrides this package's "type": "module"; copied without it
    // (the release tree has none), the entry is CommonJS by default and the chunks are .cjs.
    expect(JSON.parse(await readFile(join(dirname(bundlePath), "package.json"), "utf8"))).toEqual({
      type: "commonjs",
    });
    expect(await readFile(bundlePath, "utf8")).not.toMatch(/^(import|export)\b/m);
    const all = await readdir(chunksDir());
    expect(all.filter((f) => !f.endsWith(".cjs"))).toEqual([]);
    expect(all).toContain("table.cjs");
  });

  it("starts with neither zod nor @tide/forwarding: both load only when a command needs them", async () => {
    // The entry is one file that requires no chunk until a command runs: zod (~740 KB, the API
    // commands' environment schema) and the forwarding code (~60 KB: SipHash, table builder) are
    // in chunks of their own, required by the commands using them.
    const entry = await readFile(bundlePath, "utf8");
    expect(entry).not.toMatch(/ZodError|\$ZodType/);
    expect(entry).not.toContain(FORWARDING_MARK);
    expect(entry).not.toMatch(/\/\/ src\/commands\/(table|pool|proxy|version|director|host|user)\//);
    // Each in one chunk of its own (the table and pool commands share the forwarding chunk).
    for (const mark of [/\$ZodType/, FORWARDING_MARK])
      expect(await holdingIn(dirname(bundlePath), mark), String(mark)).toHaveLength(1);
  });

  it("prints the same --help as before the split from the entry alone, outside any package", async () => {
    // A copy of the entry only, in a directory with no package.json above it (as in the release
    // tree): help and usage errors read no other file.
    const dir = await mkdtemp(join(tmpdir(), "tidectl-start-"));
    try {
      const copy = join(dir, basename(bundlePath));
      await copyFile(bundlePath, copy);
      const help = spawnSync(process.execPath, [copy, "--help"], { encoding: "utf8" });
      expect(help.stderr).toBe("");
      expect(help.status).toBe(0);
      expect(help.stdout).toBe(await readFile(join(fixtures, "help.txt"), "utf8"));
      for (const argv of [[], ["nope"], ["table"], ["pool", "--help"], ["table", "nope"]]) {
        const r = spawnSync(process.execPath, [copy, ...argv], { encoding: "utf8" });
        expect(r.stderr + r.stdout, argv.join(" ")).toContain("Usage: tidectl");
        expect(r.stderr, argv.join(" ")).not.toContain("is missing");
      }
      // The copy lacks the table chunk: a table command does need it (the check above is not vacuous).
      const build = spawnSync(process.execPath, [copy, "table", "build", "--help"], { encoding: "utf8" });
      expect(build.stderr).toContain(`${join(dir, "tidectl-chunks", "table.cjs")} is missing`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("says in one line which file is missing and to reinstall, for any chunk a command needs", async () => {
    const copy = await copyOfDist();
    try {
      const forwarding = (await holdingIn(copy.dir, FORWARDING_MARK))[0]!;
      const zod = (await holdingIn(copy.dir, /\$ZodType/))[0]!;
      const cases: [string, string[]][] = [
        ["table.cjs", ["table", "show", golden("table.bin")]], // a group's own chunk
        [forwarding, ["table", "build", golden("table.json"), join(copy.dir, "t.bin")]], // one it requires
        [zod, ["pool", "list", "--url", "http://127.0.0.1:9", "--token", "tide_test"]], // one loaded as it runs
      ];
      for (const [chunk, argv] of cases) {
        const file = join(copy.dir, "tidectl-chunks", chunk);
        const saved = await readFile(file);
        await rm(file);
        const r = spawnSync(process.execPath, [copy.entry, ...argv], { encoding: "utf8" });
        await writeFile(file, saved);
        expect(r.stderr, chunk).toBe(
          `tidectl: ${file} is missing, so this installation is broken: reinstall tidectl\n`,
        );
        expect(r.status, chunk).toBe(1);
      }
      // Restored, the same commands get past loading (the cases above failed for the file alone).
      const table = spawnSync(process.execPath, [copy.entry, "table", "show", golden("table.bin")], {
        encoding: "utf8",
      });
      expect(table.stderr).toBe("");
      expect(table.status).toBe(0);
    } finally {
      await copy.remove();
    }
  });

  it("loads the environment chunk for an API command", () => {
    const r = spawnSync(process.execPath, [bundlePath, "pool", "list", "--url", "http://127.0.0.1:9"], {
      encoding: "utf8",
      env: { ...process.env, TIDE_URL: "", TIDE_TOKEN: "tide_test" },
    });
    // It got as far as connecting: the lazily loaded env.ts parsed TIDE_TOKEN.
    expect(r.stderr).toContain("cannot reach http://127.0.0.1:9");
    expect(r.status).toBe(1);
  });

  it("exits 2 with usage on an unknown command", () => {
    const r = spawnSync(process.execPath, [bundlePath, "nope"], { encoding: "utf8" });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("Usage: tidectl");
  });
});
