/** Test-only access to the golden tables and the vector file. Missing files fail loudly. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
/** The monorepo root (packages/forwarding/src/__fixtures__ -> 4 levels up). */
export const repoRoot = resolve(here, "../../../..");
/** Goldens built by glb-director itself (provenance and sha256: testdata/glb/README.md). */
export const goldenDir = resolve(here, "../../testdata/glb");
export const vectorFile = resolve(here, "../../vectors/forwarding-vectors.json");

export const GOLDEN_NAMES = ["table", "golden-drain", "golden-unhealthy", "golden-inactive"] as const;
export type GoldenName = (typeof GOLDEN_NAMES)[number];

function mustRead(path: string): Buffer {
  if (!existsSync(path)) {
    throw new Error(
      `test fixture missing: ${path} (packages/forwarding/testdata/glb is part of the repository)`,
    );
  }
  return readFileSync(path);
}

export function goldenJson(name: GoldenName): string {
  return mustRead(join(goldenDir, `${name}.json`)).toString("utf8");
}

export function goldenBin(name: GoldenName): Uint8Array {
  return new Uint8Array(mustRead(join(goldenDir, `${name}.bin`)));
}

/** sha256 values published in testdata/glb/README.md, parsed from the README itself. */
export function goldenReadmeHashes(): Map<string, string> {
  const text = mustRead(join(goldenDir, "README.md")).toString("utf8");
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^- (\S+\.bin) ([0-9a-f]{64})$/gm)) out.set(m[1]!, m[2]!);
  return out;
}

export interface Vectors {
  siphash24: { key: string; message: string; output: string; u64: string }[];
  rendezvous: {
    seed: string;
    proxies: string[];
    row: number;
    rowSeed: string;
    order: string[];
    source: string;
  }[];
  flows: {
    hashKey: string;
    seed: string;
    proxies: string[];
    fields: ("src_addr" | "dst_addr" | "src_port" | "dst_port")[];
    srcAddr: string;
    srcPort: number;
    dstAddr?: string;
    dstPort?: number;
    digest: string;
    row: number;
    primary: string;
    secondary: string;
    outerSourcePort: number;
    source: string;
  }[];
  goldenRows: { file: string; table: number; row: number; primary: string; secondary: string }[];
}

export function vectors(): Vectors {
  return JSON.parse(mustRead(vectorFile).toString("utf8")) as Vectors;
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

export function unhex(text: string): Uint8Array {
  return Uint8Array.from(Buffer.from(text, "hex"));
}
