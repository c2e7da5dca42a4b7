/**
 * tidectl entry point (bundled to dist/tidectl.js, CommonJS: scripts/build.mjs).
 * No top-level await: the bundle is CommonJS, which has none.
 */
import { runCli } from "./cli";

void runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  cwd: process.cwd(),
}).then((code) => {
  process.exitCode = code;
});
