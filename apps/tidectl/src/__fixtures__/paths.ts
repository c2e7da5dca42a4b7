/** Test-only paths: the repo root, the golden tables, the bundle. Missing goldens fail loudly. */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
/** apps/tidectl/src/__fixtures__ -> repo root. */
export const repoRoot = resolve(here, "../../../..");
export const bundlePath = resolve(here, "../../dist/tidectl.js");

export function golden(file: string): string {
  const dir = resolve(repoRoot, "packages/forwarding/testdata/glb");
  const path = join(dir, file);
  if (!existsSync(path))
    throw new Error(`test fixture missing: ${path} (packages/forwarding/testdata/glb is in the repository)`);
  return path;
}
