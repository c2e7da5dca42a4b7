// Bundles the `tide-console` command (server/main.ts) into dist/tide-console.mjs: plain JS that
// runs on Debian's node without tsx or the repository. Runs after `next build` (npm run build).
// Left as runtime imports, resolved from the node_modules beside the bundle (the standalone
// output's traced ones in the release tree, the workspace's in the repo): Next itself, and
// Prisma's client with its driver adapter and node-postgres, which load their Wasm query
// compiler and native-free driver from their own package files.
// esbuild comes hoisted from the workspace (apps/tidectl's devDependency).
import { readFileSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";

const appDir = path.resolve(import.meta.dirname, "..");
const outfile = path.join(appDir, "dist/tide-console.mjs");
// Tide's release version (the root package.json's), put in as @tide/api's version.ts expects: the
// release tree has no checkout around it to read it from.
const { version } = JSON.parse(readFileSync(path.join(appDir, "../../package.json"), "utf8"));

await build({
  entryPoints: [path.join(appDir, "server/main.ts")],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["next", "@prisma/client", "@prisma/adapter-pg", "pg", "pg-native"],
  // CommonJS dependencies bundled into ESM still call require() for Node's built-ins.
  banner: {
    js: 'import { createRequire as __tideCreateRequire } from "node:module"; const require = __tideCreateRequire(import.meta.url);',
  },
  define: { __TIDE_VERSION__: JSON.stringify(version) },
  legalComments: "none",
  logLevel: "warning",
});
console.log(`built ${path.relative(process.cwd(), outfile)}`);
