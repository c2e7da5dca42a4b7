/** tide-agent entry point (bundled to dist/tide-agent.js). */
import { runCli } from "./cli/cli";
import { env } from "./env";

const code = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env,
});
if (code !== null) process.exitCode = code;
