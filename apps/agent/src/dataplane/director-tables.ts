import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import type { DesiredState } from "@tide/contracts";
import { decodeGlbd, encodeGlbd, tableContentHash } from "@tide/forwarding";

type DesiredTable = DesiredState["directorTables"][number];

/**
 * The console serves one GLBD file per pool (its content hash = sha256 of that 1-table file); a
 * director loads one file holding every pool it serves, with `pool_names` in file order, and
 * reports each pool's hash as the sha256 of that pool alone as a 1-table file. So: download each
 * pool (verified by hash), decode, re-encode all tables in one file, load it, and check the
 * director now serves exactly the desired hashes.
 */

/** Whether the director serves exactly the desired pools at the desired hashes (no more, no less). */
export function tablesInSync(
  desired: readonly DesiredTable[],
  served: Readonly<Record<string, string>>,
): boolean {
  const names = Object.keys(served);
  return names.length === desired.length && desired.every((t) => served[t.poolName] === t.contentHash);
}

/**
 * One GLBD file with each pool's table, in the given order. Each part must be a valid 1-table file
 * whose sha256 is the pool's content hash; a mismatch throws (nothing is written or loaded).
 */
export function mergePoolTables(
  parts: readonly { poolName: string; contentHash: string; bytes: Uint8Array }[],
): {
  bytes: Uint8Array;
  poolNames: string[];
} {
  if (parts.length === 0) throw new Error("no tables to merge");
  const names = new Set<string>();
  const tables = parts.map((p) => {
    if (names.has(p.poolName)) throw new Error(`pool ${p.poolName} appears twice`);
    names.add(p.poolName);
    const got = tableContentHash(p.bytes);
    if (got !== p.contentHash)
      throw new Error(`pool ${p.poolName}: sha256 ${got} != contentHash ${p.contentHash}`);
    const decoded = decodeGlbd(p.bytes);
    if (decoded.length !== 1)
      throw new Error(`pool ${p.poolName}: ${decoded.length} tables in its file, expected 1`);
    // Re-encoding must give the same bytes, or the director's per-pool hash would differ.
    if (tableContentHash(encodeGlbd(decoded)) !== p.contentHash)
      throw new Error(`pool ${p.poolName}: the file does not re-encode to the same bytes`);
    return decoded[0]!;
  });
  return { bytes: encodeGlbd(tables), poolNames: parts.map((p) => p.poolName) };
}

export interface ApplyTablesDeps {
  /** Downloads a pool's file (verified against its hash) and returns its path. */
  download(t: DesiredTable): Promise<string>;
  /** Director load_table; resolves with the hashes it serves afterwards. */
  load(
    file: string,
    poolNames: string[],
  ): Promise<{ generation: number; tableHashes: Record<string, string> }>;
  tableDir: string;
}

export type ApplyOutcome =
  | { kind: "in_sync" }
  | { kind: "loaded"; generation: number; file: string; poolNames: string[] }
  | { kind: "nothing_desired" };

/**
 * Bring the director to the desired tables. A director serving pools the console no longer wants
 * keeps them (an empty desired set is not a reason to stop forwarding: it is reported, not applied).
 */
export async function applyDirectorTables(
  desired: readonly DesiredTable[],
  served: Readonly<Record<string, string>>,
  deps: ApplyTablesDeps,
): Promise<ApplyOutcome> {
  if (desired.length === 0) return { kind: "nothing_desired" };
  if (tablesInSync(desired, served)) return { kind: "in_sync" };
  const parts = [];
  for (const t of desired) {
    const file = await deps.download(t);
    parts.push({
      poolName: t.poolName,
      contentHash: t.contentHash,
      bytes: new Uint8Array(await readFile(file)),
    });
  }
  const merged = mergePoolTables(parts);
  const hash = tableContentHash(merged.bytes);
  await mkdir(deps.tableDir, { recursive: true });
  const file = path.join(deps.tableDir, `director-${hash}.glbd`);
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, merged.bytes, { mode: 0o640 });
  await rename(tmp, file);
  const result = await deps.load(file, merged.poolNames);
  if (!tablesInSync(desired, result.tableHashes)) {
    throw new Error(
      `director loaded generation ${result.generation} but serves ${JSON.stringify(result.tableHashes)}, not the desired hashes`,
    );
  }
  return { kind: "loaded", generation: result.generation, file, poolNames: merged.poolNames };
}
