/**
 * npm run lab -- up|down|status|load [--fresh] [--no-redirect] [--json]
 *                [--console URL --token-file PATH] [--load]
 *
 *   up      bring the glb lab up (reuses a healthy running one unless --fresh); the processes keep
 *           running after this command exits. With --console (or TIDE_CONSOLE_URL) the console owns
 *           the fleet: the lab registers its pool, proxies and directors there with the admin API
 *           token (--token-file, or TIDE_API_TOKEN), starts its directors without a table and one
 *           tide-agent per host, and waits until every director serves the console's version.
 *           --load also starts a light client load through the VIP (a background process)
 *   down    stop every lab process (agents and load too), remove every tide-glb-* namespace and the
 *           state directory (host tokens' files included); a console keeps its records
 *   status  namespaces, processes, directors' table hashes and counters, proxies' redirect counters;
 *           in console mode each director's sync with the console (served vs desired version)
 *   load    start|stop the background client load
 * Progress goes to stderr; status goes to stdout (--json for the raw object).
 */
import { parseArgs } from "node:util";
import { resolveConsoleTarget } from "./env";
import { attach, down, up } from "./lab-lifecycle";
import type { LabStatus } from "./lab-status";
import { isLabError } from "./errors";

const log = (line: string) => process.stderr.write(`    ${line}\n`);

export function formatStatus(s: LabStatus): string {
  const out: string[] = [];
  const yes = (b: boolean) => (b ? "yes" : "NO");
  out.push(
    `lab ${s.topology} (${s.prefix}), VIP ${s.vip}, ready ${yes(s.ready)}, redirect ${yes(s.redirect)}`,
  );
  const sync = s.console;
  if (sync) {
    out.push(
      `console ${sync.url}, pool ${sync.poolName} (${sync.poolId}): ` +
        (sync.error ? `UNKNOWN (${sync.error})` : sync.inSync ? "every director in sync" : "NOT IN SYNC"),
    );
  } else {
    out.push(`table ${s.tableHash ?? "none pushed"}`);
  }
  out.push("namespaces:");
  for (const n of s.namespaces) out.push(`  ${n.name.padEnd(20)} ${n.exists ? "exists" : "MISSING"}`);
  out.push("processes:");
  for (const p of s.processes)
    out.push(
      `  ${p.key.padEnd(16)} ${p.kind.padEnd(12)} pid ${String(p.pid).padEnd(8)} ${p.alive ? "alive" : "DEAD"}`,
    );
  out.push(`directors (router ECMP: ${s.ecmp.join(", ")}):`);
  for (const d of s.directors) {
    const c = d.counters;
    const counters = c
      ? `rx ${c.rx_packets} fwd ${c.forwarded_packets} no_bind ${c.dropped.no_bind} too_big ${c.dropped.too_big} ` +
        `unsupported ${c.dropped.unsupported} tx_failed ${c.tx_failed}`
      : "";
    const hash = d.tableHash ? d.tableHash.slice(0, 16) : "-";
    const cs = sync?.directors.find((x) => x.name === d.name);
    const inSync = cs
      ? `${cs.hostname} ${cs.state === "in_sync" ? "in sync" : cs.state.toUpperCase()} served v${cs.servedVersion ?? "-"} ` +
        `desired v${cs.desiredVersion ?? "-"}`
      : sync
        ? "console: unknown"
        : d.tableHash && d.tableHash === s.tableHash
          ? "in sync"
          : d.running
            ? "OUT OF SYNC"
            : "";
    out.push(
      `  ${d.name.padEnd(6)} ${d.running ? "running" : "stopped"} ${d.inEcmp ? "in-ecmp " : "out     "} ` +
        `table ${hash} gen ${d.generation ?? "-"} ${inSync} ${counters}${d.error ? ` error: ${d.error}` : ""}`,
    );
  }
  out.push("proxies:");
  for (const p of s.proxies) {
    const r = p.redirectCounters;
    const redirect = r
      ? Object.entries(r)
          .map(([k, v]) => `${k} ${v}`)
          .join(" ")
      : p.redirectRunning
        ? "redirect running"
        : "no redirect";
    out.push(
      `  ${p.name.padEnd(6)} ${p.address.padEnd(12)} ${String(p.state ?? "-").padEnd(9)} server ${p.serverRunning ? "up" : "DOWN"} ` +
        `udp_noports ${p.udpNoPorts ?? "-"} ${redirect}${p.error ? ` error: ${p.error}` : ""}`,
    );
  }
  return out.join("\n");
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      fresh: { type: "boolean", default: false },
      "no-redirect": { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      console: { type: "string" },
      "token-file": { type: "string" },
      load: { type: "boolean", default: false },
    },
  });
  const command = positionals[0];
  const consoleTarget = () =>
    resolveConsoleTarget({ console: values.console, tokenFile: values["token-file"] });
  switch (command) {
    case "up": {
      const lab = await up({
        fresh: values.fresh,
        redirect: values["no-redirect"] ? false : "auto",
        console: consoleTarget(),
        load: values.load,
        log,
      });
      const status = await lab.status();
      lab.close();
      process.stdout.write(
        values.json ? `${JSON.stringify(status, null, 2)}\n` : `${formatStatus(status)}\n`,
      );
      return 0;
    }
    case "down":
      await down({ log });
      log("lab down");
      return 0;
    case "status": {
      const lab = await attach();
      if (!lab) {
        log("no lab state (npm run lab -- up)");
        return 1;
      }
      const target = consoleTarget();
      if (target) lab.useConsole(target);
      const status = await lab.status();
      lab.close();
      process.stdout.write(
        values.json ? `${JSON.stringify(status, null, 2)}\n` : `${formatStatus(status)}\n`,
      );
      return status.ready && (status.console === null || status.console.inSync) ? 0 : 1;
    }
    case "load": {
      const lab = await attach();
      if (!lab) {
        log("no lab state (npm run lab -- up)");
        return 1;
      }
      if (positionals[1] === "stop") {
        await lab.stopClientLoad();
        log("client load stopped");
      } else if (positionals[1] === "start") {
        await lab.startClientLoad();
        log(`client load running (log: ${lab.paths.log("client.load")})`);
      } else {
        process.stderr.write("usage: npm run lab -- load start|stop\n");
        return 2;
      }
      lab.close();
      return 0;
    }
    default:
      process.stderr.write(
        "usage: npm run lab -- up|down|status|load [--fresh] [--no-redirect] [--json] " +
          "[--console URL --token-file PATH] [--load]\n",
      );
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`lab: ${isLabError(e) ? `${e.code}: ` : ""}${(e as Error).message}\n`);
    process.exit(1);
  },
);
