/** tidectl entry point (bundled to dist/tidectl.js). */
import { runCli } from "./cli";

const code = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  cwd: process.cwd(),
});
process.exitCode = code;
