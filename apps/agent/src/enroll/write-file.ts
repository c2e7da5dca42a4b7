import { randomBytes } from "node:crypto";
import { chmod, mkdir, open, rename, rm } from "node:fs/promises";
import path from "node:path";

/**
 * Write a file atomically with an exact mode: a temporary file in the same directory (created with
 * the mode, so a secret is never readable by others, not even for a moment; chmod'ed again because
 * the umask may have taken bits away), flushed to disk, then renamed over the target. A crash leaves
 * the old file or the new one, never half of one. The directory is created 0755 when missing.
 */
export async function writeFileAtomic(file: string, text: string, mode: number): Promise<void> {
  const dir = path.dirname(file);
  const created = await mkdir(dir, { recursive: true, mode: 0o755 });
  // The directories made here are 0755 whatever the umask (a root shell's may be 077).
  for (let d = dir; created !== undefined; d = path.dirname(d)) {
    await chmod(d, 0o755);
    if (d === created || d === path.dirname(d)) break;
  }
  const tmp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
  const fh = await open(tmp, "wx", mode);
  try {
    await fh.chmod(mode);
    await fh.writeFile(text, "utf8");
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
  await fh.close();
  try {
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
