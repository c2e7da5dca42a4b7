import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Writes `bytes` to `path` so that readers see either the old file or the complete new one:
 * temp file in the same directory (same filesystem, so rename is atomic), fsync, rename,
 * then fsync of the directory so the rename itself is durable. The temp file is removed on failure.
 * Synchronous: a command writes one file and waits for it anyway, and node:fs/promises costs
 * ~3.5 ms of CPU to load (issue 28: a whole `table build` within 1.5x the C CLI's).
 * The temp name is pid + a random part (Math.random: node:crypto costs ~7 ms to load), opened
 * exclusively ("wx"); a name that exists (another writer's file in a shared directory, a stale one)
 * is never touched: another name is tried, and only a file this call created is ever removed.
 */
export function writeFileAtomic(path: string, bytes: Uint8Array): void {
  const dir = dirname(path);
  const { fd, tmp } = openTemp(dir, basename(path));
  let renamed = false;
  try {
    try {
      for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
    renamed = true;
    const dirFd = openSync(dir, "r");
    try {
      fsyncSync(dirFd);
    } catch {
      // Some filesystems refuse fsync on directories; the data itself is already synced.
    } finally {
      closeSync(dirFd);
    }
  } finally {
    if (!renamed) {
      try {
        unlinkSync(tmp);
      } catch {
        // Already gone.
      }
    }
  }
}

/** Tries at most this many temp names before giving up (each a fresh random part). */
const TEMP_ATTEMPTS = 3;

/** A new temp file beside the target, created by this call (exclusive open). */
function openTemp(dir: string, base: string): { fd: number; tmp: string } {
  for (let attempt = 1; ; attempt++) {
    const tmp = join(dir, `.${base}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`);
    try {
      return { fd: openSync(tmp, "wx", 0o644), tmp };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST" || attempt >= TEMP_ATTEMPTS) throw e;
    }
  }
}
