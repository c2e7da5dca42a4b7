/**
 * The C builder (c-builder.c) for the benchmarks: compiled here with the data plane's SipHash,
 * and glb-director JSON written for the benchmark's proxy lists, so TypeScript and C are timed
 * in the same run on the same input.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "../../..");

/** A scratch directory for this run's binary and inputs. */
export const benchDir = mkdtempSync(join(tmpdir(), "tide-table-bench-"));
process.on("exit", () => rmSync(benchDir, { recursive: true, force: true }));

/** Compiles c-builder.c (cc -O2, jansson) and returns the binary's path. */
export function compileCBuilder(): string {
  const bin = join(benchDir, "c-builder");
  execFileSync(
    process.env.CC ?? "cc",
    [
      "-std=gnu11",
      "-O2",
      `-I${join(repoRoot, "dataplane/common")}`,
      "-o",
      bin,
      join(here, "c-builder.c"),
      "-ljansson",
    ],
    { stdio: "inherit" },
  );
  return bin;
}

/** The benchmark's hash key, seed and n IPv4 proxies (all active and healthy). */
export function benchTable(n: number) {
  return {
    hashKey: Uint8Array.from({ length: 16 }, (_, i) => i * 17 + 1),
    seed: Uint8Array.from({ length: 16 }, (_, i) => 255 - i * 13),
    binds: [{ address: "203.0.113.10", prefixBits: 32, proto: "tcp" as const, portStart: 443, portEnd: 443 }],
    backends: Array.from({ length: n }, (_, i) => ({
      address: `10.${20 + (i >> 8)}.${i & 255}.${((i * 7) % 250) + 1}`,
      state: "active" as const,
      healthy: true,
    })),
  };
}

/** benchTable(n) as glb-director JSON in benchDir; returns its path. */
export function writeGlbJson(n: number): string {
  const t = benchTable(n);
  const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
  const path = join(benchDir, `table-${n}.json`);
  writeFileSync(
    path,
    JSON.stringify({
      tables: [
        {
          hash_key: hex(t.hashKey),
          seed: hex(t.seed),
          binds: [{ ip: "203.0.113.10", proto: "tcp", port: 443 }],
          backends: t.backends.map((b) => ({ ip: b.address, state: b.state, healthy: b.healthy })),
        },
      ],
    }),
  );
  return path;
}

/** CPU ms of each of `runs` in-process C builds of the table in `json` (after its own warm-up). */
export function cBuildCpuMs(bin: string, json: string, runs: number, top2 = false): number[] {
  const out = execFileSync(bin, ["time", json, String(runs + 1), ...(top2 ? ["--top2"] : [])], {
    encoding: "utf8",
  });
  return out.trim().split("\n").slice(1).map(Number);
}
