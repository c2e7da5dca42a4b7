import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingFile } from "./broken-install";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tidectl-missing-"));
  // A chunk that requires a shared chunk that is not there, as dist/tidectl-chunks/table.cjs would.
  await writeFile(join(dir, "table.cjs"), 'require("./chunk-GONE.cjs");\n');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The error require() throws for `request` from `from`. */
function requireError(from: string, request: string): unknown {
  try {
    createRequire(from)(request);
  } catch (e) {
    return e;
  }
  throw new Error(`${request} loaded`);
}

describe("missingFile", () => {
  it("names the missing file by its absolute path, relative to the file that required it", () => {
    expect(missingFile(requireError(join(dir, "tidectl.js"), "./tidectl-chunks/pool.cjs"))).toBe(
      join(dir, "tidectl-chunks/pool.cjs"),
    );
    // Not the file that exists (table.cjs) but the one it lacks.
    expect(missingFile(requireError(join(dir, "tidectl.js"), "./table.cjs"))).toBe(
      join(dir, "chunk-GONE.cjs"),
    );
  });

  it("is undefined for any other error", () => {
    expect(missingFile(new Error("Cannot find module './x.cjs'"))).toBeUndefined(); // no code
    expect(missingFile(Object.assign(new Error("ENOENT: no such file"), { code: "ENOENT" }))).toBeUndefined();
    expect(missingFile("Cannot find module './x.cjs'")).toBeUndefined();
  });
});
