/** One real process: the esbuild bundle (rebuilt here so it matches the sources). */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { bundlePath, golden, repoRoot } from "./__fixtures__/paths";

beforeAll(() => {
  execFileSync("npm", ["run", "-w", "@tide/tidectl", "build"], { cwd: repoRoot, stdio: "pipe" });
  if (!existsSync(bundlePath))
    throw new Error(`npm run -w @tide/tidectl build did not produce ${bundlePath}`);
}, 60_000);

describe("dist/tidectl.js", () => {
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

  it("keeps zod (the API commands' environment schema) out of the entry, in a chunk of its own", async () => {
    // Help and the offline table tools load only the entry file; zod is ~750 KB of it otherwise.
    const entry = await readFile(bundlePath, "utf8");
    expect(entry).not.toMatch(/ZodError|\$ZodType/);
    const chunkDir = join(dirname(bundlePath), "tidectl-chunks");
    const chunks = await readdir(chunkDir);
    const zodChunks = [];
    for (const c of chunks.filter((f) => f.endsWith(".js")))
      if (/\$ZodType/.test(await readFile(join(chunkDir, c), "utf8"))) zodChunks.push(c);
    expect(zodChunks).toHaveLength(1);
    expect(entry).toContain(`import("./tidectl-chunks/${zodChunks[0]}")`);
    // Copied outside the repository (the console's release tree), the chunks still load as ES modules.
    expect(JSON.parse(await readFile(join(chunkDir, "package.json"), "utf8"))).toEqual({ type: "module" });
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
