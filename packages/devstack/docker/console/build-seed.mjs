// Bundles the development seed (packages/api/src/seed/main.ts: the first admin, the demo fleet)
// into one plain-JS file for the console image, which holds the release tree (Next's standalone
// output + tide-console.mjs, apps/console/scripts/release-tree.sh) and no tsx or sources:
//   node packages/devstack/docker/console/build-seed.mjs OUT_FILE
// Left as runtime imports, as in apps/console/scripts/build-cli.mjs: Prisma's client with its
// driver adapter and node-postgres, resolved from the tree's traced node_modules.
import path from "node:path";
import { build } from "esbuild";

const [outfile] = process.argv.slice(2);
if (!outfile) throw new Error("usage: build-seed.mjs OUT_FILE");
const repoRoot = path.resolve(import.meta.dirname, "../../../..");

await build({
  entryPoints: [path.join(repoRoot, "packages/api/src/seed/main.ts")],
  outfile: path.resolve(outfile),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["@prisma/client", "@prisma/adapter-pg", "pg", "pg-native"],
  banner: {
    js: 'import { createRequire as __tideCreateRequire } from "node:module"; const require = __tideCreateRequire(import.meta.url);',
  },
  // The seed's default data directory is relative to its source file; the image sets TIDE_DATA_DIR.
  legalComments: "none",
  logLevel: "warning",
});
console.log(`built ${outfile}`);
