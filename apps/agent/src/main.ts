/** tide-agent entry point (bundled to dist/tide-agent.js). */
import { runCli } from "./cli/cli";
import { parseEnv, type AgentEnv } from "./env";

let env: AgentEnv | null = null;
try {
  env = parseEnv();
} catch (err) {
  // A bad environment is a bad configuration: exit 2, which the unit does not restart.
  process.stderr.write(`tide-agent: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 2;
}
if (env !== null) {
  const code = await runCli(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env,
  });
  if (code !== null) process.exitCode = code;
}
