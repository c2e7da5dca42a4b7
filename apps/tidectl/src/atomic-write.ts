import { randomBytes } from "node:crypto";
import { open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * Writes `bytes` to `path` so that readers see either the old file or the complete new one:
 * temp file in the same directory (same filesystem, so rename is atomic), fsync, rename,
 * then fsync of the directory so the rename itself is durable. The temp file is removed on failure.
 */
export async function writeFileAtomic(path: string, bytes: Uint8Array): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  let renamed = false;
  try {
    const handle = await open(tmp, "wx", 0o644);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
    renamed = true;
    const dirHandle = await open(dir, "r");
    try {
      await dirHandle.sync();
    } catch {
      // Some filesystems refuse fsync on directories; the data itself is already synced.
    } finally {
      await dirHandle.close();
    }
  } finally {
    if (!renamed) await unlink(tmp).catch(() => undefined);
  }
}
