import { readFileSync } from "node:fs";

/** The kernel's list of CPUs that can ever be online: per-CPU map values have one slot each. */
export const POSSIBLE_CPUS_FILE = "/sys/devices/system/cpu/possible";

/**
 * Number of CPUs in a kernel CPU list ("0-3", "0,2-5", "0"). Per-CPU maps are sized by the
 * highest possible CPU + 1 (libbpf_num_possible_cpus), so gaps count too.
 */
export function parseCpuList(text: string): number {
  let highest = -1;
  for (const part of text.trim().split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (m === null) throw new Error(`bad CPU list ${JSON.stringify(text.trim())}`);
    highest = Math.max(highest, Number(m[2] ?? m[1]));
  }
  return highest + 1;
}

let cached: number | null = null;

/** Possible CPUs of this host (read once: it does not change while the system runs). */
export function possibleCpus(): number {
  cached ??= parseCpuList(readFileSync(POSSIBLE_CPUS_FILE, "utf8"));
  return cached;
}
