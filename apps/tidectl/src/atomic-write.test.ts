import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { writeFileAtomic } from "./atomic-write";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "tidectl-atomic-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("writeFileAtomic", () => {
  it("writes a new file and replaces an old one, leaving no temp file", async () => {
    const path = join(dir, "t.bin");
    writeFileAtomic(path, new Uint8Array([1, 2, 3]));
    expect([...(await readFile(path))]).toEqual([1, 2, 3]);
    const big = new Uint8Array(1 << 20).map((_, i) => i & 255); // more than one write(2) may take
    writeFileAtomic(path, big);
    expect((await readFile(path)).equals(big)).toBe(true);
    expect(await readdir(dir)).toEqual(["t.bin"]);
  });

  it("leaves the old file and no temp file when the rename fails", async () => {
    // The target is a non-empty directory: open and write succeed, rename(2) fails (EISDIR).
    const path = join(dir, "t.bin");
    await mkdir(path);
    await writeFile(join(path, "keep"), "old");
    expect(() => writeFileAtomic(path, new Uint8Array([9]))).toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(await readdir(dir)).toEqual(["t.bin"]);
    expect(await readFile(join(path, "keep"), "utf8")).toBe("old");
  });

  it("never removes a temp name it did not create, and tries another", async () => {
    const path = join(dir, "t.bin");
    // Every random part the same: the one temp name is taken by someone else's file.
    const random = vi.spyOn(Math, "random").mockReturnValue(0.5);
    try {
      const taken = join(dir, `.t.bin.${process.pid}.${(0.5).toString(36).slice(2, 10)}.tmp`);
      await writeFile(taken, "another writer's");
      expect(() => writeFileAtomic(path, new Uint8Array([1]))).toThrow(/EEXIST/);
      expect(await readFile(taken, "utf8")).toBe("another writer's");
      expect(random).toHaveBeenCalledTimes(3);
      // With a free name it writes as usual, and the other file stays.
      random.mockReturnValue(0.25);
      writeFileAtomic(path, new Uint8Array([2]));
      expect([...(await readFile(path))]).toEqual([2]);
      expect((await readdir(dir)).sort()).toEqual([taken.slice(dir.length + 1), "t.bin"].sort());
    } finally {
      random.mockRestore();
    }
  });
});
