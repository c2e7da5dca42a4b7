/**
 * The fleet container's health, kept in a file for the image's healthcheck to read (a `cat`, not a
 * `lab status` that loads tsx and the lab for ~2.3 s of CPU each time). One process, started by
 * start.sh once the lab is up, asks the running lab for its status every TIDE_FLEET_STATUS_EVERY_S
 * seconds (default 15) and replaces the file atomically with one line:
 *   in-sync <unix seconds>                 every director serves the console's table
 *   out-of-sync <unix seconds> <why>       anything else (a process down, a director behind)
 * The healthcheck also requires the line to be recent, so a watcher that died reads as unhealthy.
 *   node --import tsx packages/devstack/docker/fleet/status-watch.ts STATUS_FILE
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
// Resolved from the image's node_modules (the workspace link): @tide/lab depends on this package,
// so this one cannot declare it back.
import { attach } from "@tide/lab";

const EVERY_MS = Number(process.env.TIDE_FLEET_STATUS_EVERY_S ?? 15) * 1000;

const file = process.argv[2] ?? "";
if (file === "") throw new Error("usage: status-watch.ts STATUS_FILE");
const tokenFile = process.env.TIDE_LAB_TOKEN_FILE ?? "";
const consoleUrl = (process.env.TIDE_CONSOLE_URL ?? "").replace(/\/+$/, "");
if (tokenFile === "" || consoleUrl === "")
  throw new Error("TIDE_LAB_TOKEN_FILE and TIDE_CONSOLE_URL are needed");
// As `lab status --console URL --token-file FILE` (start.sh made the file before the lab came up).
const target = { url: consoleUrl, token: readFileSync(tokenFile, "utf8").trim(), tokenFile };

function write(line: string): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${line}\n`);
  renameSync(tmp, file);
}

async function once(): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const lab = await attach();
  if (!lab) return `out-of-sync ${now} no lab state`;
  try {
    lab.useConsole(target);
    const status = await lab.status();
    if (!status.ready) return `out-of-sync ${now} lab not ready`;
    if (status.console !== null && !status.console.inSync) return `out-of-sync ${now} directors behind`;
    return `in-sync ${now}`;
  } finally {
    lab.close();
  }
}

// Until start.sh kills it (SIGTERM's default action: no handler, nothing to flush).
for (;;) {
  const line = await once().catch(
    (e: unknown) => `out-of-sync ${Math.floor(Date.now() / 1000)} ${(e as Error).message.split("\n")[0]}`,
  );
  write(line);
  await new Promise((r) => setTimeout(r, EVERY_MS));
}
