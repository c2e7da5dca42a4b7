/** One real process: the esbuild bundle (rebuilt here so it matches the sources). */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { bundlePath, golden, repoRoot } from "./__fixtures__/paths";

const fixtures = join(dirname(fileURLToPath(import.meta.url)), "__fixtures__");
/** A declaration only packages/forwarding has (its SipHash block loop): forwarding code is here. */
const FORWARDING_MARK = "function sipBlocks(";

/** `file` and every file it imports statically (`import … from "./x.js"`, not `import("./x.js")`). */
async function startupFiles(file: string, seen = new Set<string>()): Promise<string[]> {
  if (seen.has(file)) return [];
  seen.add(file);
  const text = await readFile(file, "utf8");
  for (const m of text.matchAll(/^import\s*(?:[^"'();]*?\bfrom\s*)?"(\.{1,2}\/[^"]+)";/gm))
    await startupFiles(resolve(dirname(file), m[1]!), seen);
  return [...seen];
}

beforeAll(() => {
  execFileSync("npm", ["run", "-w", "@tide/tidectl", "build"], { cwd: repoRoot, stdio: "pipe" });
  if (!existsSync(bundlePath))
    throw new Error(`npm run -w @tide/tidectl build did not produce ${bundlePath}`);
}, 60_000);

describe("dist/tidectl.js", () => {
  it("has the shebang; its chunks do not (lintian: a #! file must be executable)", async () => {
    expect((await readFile(bundlePath, "utf8")).startsWith("#!/usr/bin/env node\n")).toBe(true);
    const chunksDir = join(dirname(bundlePath), "tidectl-chunks");
    const chunks = (await readdir(chunksDir)).filter((f) => f.endsWith(".js"));
    expect(chunks.length).toBeGreaterThan(0);
    for (const chunk of chunks) {
      expect((await readFile(join(chunksDir, chunk), "utf8")).startsWith("#!"), chunk).toBe(false);
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

  it("starts with neither zod nor @tide/forwarding: both load only when a command needs them", async () => {
    // What node reads to print help or a usage error: the entry and the chunks it imports
    // statically. zod (~740 KB, the API commands' environment schema) and the forwarding code
    // (~55 KB: SipHash, table builder) are dynamic imports, run only by the commands using them.
    const start = await startupFiles(bundlePath);
    expect(start.length).toBeGreaterThan(1); // it did follow the entry's imports
    for (const file of start) {
      const text = await readFile(file, "utf8");
      expect(text, file).not.toMatch(/ZodError|\$ZodType/);
      expect(text, file).not.toContain(FORWARDING_MARK);
      expect(text, file).not.toMatch(/\/\/ src\/commands\/(table|pool|proxy|version|director|host|user)\//);
    }
    const chunkDir = join(dirname(bundlePath), "tidectl-chunks");
    const chunks = (await readdir(chunkDir)).filter((f) => f.endsWith(".js"));
    const holding = async (mark: RegExp | string) => {
      const found = [];
      for (const c of chunks) {
        const text = await readFile(join(chunkDir, c), "utf8");
        if (typeof mark === "string" ? text.includes(mark) : mark.test(text)) found.push(c);
      }
      return found;
    };
    // Each in one chunk of its own (the table and pool commands share the forwarding chunk).
    for (const mark of [/\$ZodType/, FORWARDING_MARK])
      expect(await holding(mark), String(mark)).toHaveLength(1);
    // Copied outside the repository (the console's release tree), the chunks still load as ES modules.
    expect(JSON.parse(await readFile(join(chunkDir, "package.json"), "utf8"))).toEqual({ type: "module" });
  });

  it("prints the same --help as before the split, from the start-up files alone", async () => {
    // A copy holding only the entry and its static imports: help and usage errors need nothing else.
    const dir = await mkdtemp(join(tmpdir(), "tidectl-start-"));
    try {
      const root = dirname(bundlePath);
      for (const file of [...(await startupFiles(bundlePath)), join(root, "tidectl-chunks/package.json")]) {
        await mkdir(dirname(join(dir, relative(root, file))), { recursive: true });
        await copyFile(file, join(dir, relative(root, file)));
      }
      const copy = join(dir, basename(bundlePath));
      const help = spawnSync(process.execPath, [copy, "--help"], { encoding: "utf8" });
      expect(help.stderr).toBe("");
      expect(help.status).toBe(0);
      expect(help.stdout).toBe(await readFile(join(fixtures, "help.txt"), "utf8"));
      for (const argv of [[], ["nope"], ["table"], ["pool", "--help"], ["table", "nope"]]) {
        const r = spawnSync(process.execPath, [copy, ...argv], { encoding: "utf8" });
        expect(r.stderr + r.stdout, argv.join(" ")).toContain("Usage: tidectl");
        expect(r.stderr, argv.join(" ")).not.toContain("ERR_MODULE_NOT_FOUND");
      }
      // The copy lacks the table chunk: a table command does need it (the check above is not vacuous).
      const build = spawnSync(process.execPath, [copy, "table", "build", "--help"], { encoding: "utf8" });
      expect(build.stderr).toContain("ERR_MODULE_NOT_FOUND");
    } finally {
      await rm(dir, { recursive: true, force: true });
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
