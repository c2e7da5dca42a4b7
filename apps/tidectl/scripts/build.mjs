// Bundles tidectl into dist/ as CommonJS (npm run build):
//   dist/tidectl.js                  the entry: dispatch, --help, usage errors; reads no other file
//   dist/package.json                {"type":"commonjs"}: this package is "module", the bundle is not
//   dist/tidectl-chunks/<group>.cjs  a command group's code, required when one of its commands runs
//   dist/tidectl-chunks/chunk-*.cjs  code shared by groups (table code, the API client, zod)
// Why CommonJS: Node 20's ES module loader costs ~9 ms of CPU before the first line of an .mjs
// runs (empty file: 47 ms vs 38 ms CommonJS on the 2-core dev machine), and tidectl --help has a
// 15 ms budget over bare node (issue 28). Chunks are .cjs so they stay CommonJS wherever they are
// copied (release tree, .deb) with no package.json beside them.
// Two builds, so that the help path is one file:
//   1. the entry (src/main.ts): the group imports in commands/listing.ts (`import("./table/index")`)
//      are left as requires of ./tidectl-chunks/<group>.cjs;
//   2. the groups, split (shared code in chunk-*.cjs), built as ES modules (esbuild splits ESM only)
//      and each output turned into CommonJS (imports -> require, import() -> a require in a promise).
// cli-io.ts is then in the entry and in the groups' chunks: runCli tells its errors apart by name.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { build, transform } from "esbuild";

const appDir = path.resolve(import.meta.dirname, "..");
const dist = path.join(appDir, "dist");
const chunksDir = path.join(dist, "tidectl-chunks");
const listing = path.join(appDir, "src/commands/listing.ts");
const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  legalComments: "none",
  logLevel: "warning",
};
// Node's require() and no promise wrapper of the ESM loader: `import("./x")` -> `Promise.resolve().then(() => require("./x"))`.
const cjs = { format: "cjs", supported: { "dynamic-import": false } };

rmSync(dist, { recursive: true, force: true });

/** Group name -> its source module, as listing.ts imports them. */
const groups = new Map();
await build({
  ...common,
  ...cjs,
  entryPoints: [path.join(appDir, "src/main.ts")],
  outfile: path.join(dist, "tidectl.js"),
  banner: { js: "#!/usr/bin/env node" },
  plugins: [
    {
      name: "groups-as-chunks",
      setup(b) {
        b.onResolve({ filter: /^\.\/[a-z-]+\/index$/ }, (args) => {
          if (args.importer !== listing) return undefined;
          const name = args.path.slice(2, -"/index".length);
          groups.set(name, path.join(path.dirname(listing), args.path + ".ts"));
          return { path: `./tidectl-chunks/${name}.cjs`, external: true };
        });
      },
    },
  ],
});
if (groups.size === 0) throw new Error(`build: no group imports found in ${listing}`);

const split = await build({
  ...common,
  entryPoints: Object.fromEntries(groups),
  splitting: true,
  format: "esm",
  outdir: chunksDir,
  entryNames: "[name]",
  chunkNames: "chunk-[hash]",
  outExtension: { ".js": ".cjs" },
  write: false,
});
mkdirSync(chunksDir, { recursive: true });
for (const file of split.outputFiles) {
  const { code } = await transform(file.text, { ...cjs, platform: "node", target: "node20", loader: "js" });
  writeFileSync(file.path, code);
}
writeFileSync(path.join(dist, "package.json"), '{ "type": "commonjs" }\n');
console.log(
  `built ${path.relative(process.cwd(), dist)}: tidectl.js and ${split.outputFiles.length} chunks (${[...groups.keys()].join(", ")})`,
);
