/**
 * npm run lab -- <command> [options]; `npm run lab -- --help` prints USAGE below.
 * Progress goes to stderr; status goes to stdout (--json for the raw object).
 */
import { parseArgs } from "node:util";
import { resolveConsoleTarget } from "./env";
import { DEFAULT_LOAD_STREAMS, DEFAULT_STREAM_LIFETIME_S, type Lab } from "./lab";
import { attach, down, up } from "./lab-lifecycle";
import { RESTART_NAME_HELP } from "./lab-restart";
import type { LabStatus } from "./lab-status";
import { LabError, isLabError } from "./errors";
import { LAB_POOL } from "./lab-table";
import { parseVip } from "./lab-vips";
import { LAB_VIP } from "./topology";

export const USAGE = `usage: npm run lab -- <command> [options]

  up        bring the glb lab up (reuses a healthy running one unless --fresh); its processes keep
            running after this command exits. [--fresh] [--no-redirect] [--json] [--load]
            [--console URL --token-file PATH]: with --console (or TIDE_CONSOLE_URL) the console
            owns the fleet: the lab registers its pool, proxies and directors there with the admin
            API token (--token-file, or TIDE_API_TOKEN), starts its directors without a table and
            one tide-agent per host, and waits until every director serves the console's version.
            --load also starts the background client load (as load start).
  down      stop every lab process (agents and load too), remove every tide-glb-* namespace and the
            state directory (host tokens' files included); a console keeps its records
  status    namespaces, processes (pid, alive), added VIPs, directors' table hashes and counters,
            proxies' redirect counters; in console mode each director's sync with the console
  restart <process>
            stop one process (SIGTERM, SIGKILL after a grace time; a crashed one is just started)
            and start it again with its original command, working directory and environment; waits
            until it is ready and records its new pid (status then shows it alive). Every other
            process keeps running. <process> is a name status lists:
              ${RESTART_NAME_HELP.join("\n              ")}
  load start|stop
            the background client load through the VIP: --streams N stream connections (default
            ${DEFAULT_LOAD_STREAMS}) and 2 new HTTP connections/s. Each stream ends after a random lifetime in
            [S/2, S] (--stream-lifetime-s S, default ${DEFAULT_STREAM_LIFETIME_S}) and a new one replaces it at once, so a
            drained proxy's established connections reach zero within about S s;
            --stream-lifetime-s 0 keeps streams open until they fail. up --load uses the defaults.
  vip add <address>[/prefix] [--pool NAME]
            route a new VIP in the lab, like the lab's own ${LAB_VIP}: the router's route towards the
            directors (the same ECMP set as the lab's VIP, and it follows setDirectorEcmp), the
            prefix on every proxy's lo (direct server return). IPv4, /16../32, no host bits, outside
            10.100.0.0/16 and apart from the lab's VIP and other added VIPs. Idempotent.
            A director forwards only what a bind of its table matches (else counter no_bind):
              standalone: the lab adds the VIP's binds to its table (tcp 80, tcp 9000, udp 9000, as
                for its own VIP) and pushes it: the VIP carries traffic at once (--pool: only ${LAB_POOL}).
              console mode: make the bind in the console (the pool's Binds, or REST
                PUT /api/v1/pools/{id}/binds) on pool --pool (default: the lab's pool, lab); the
                directors' agents load the new version. The lab does not create it.
  vip remove <address>[/prefix]
            undo vip add (route, lo addresses; standalone: the binds). In console mode remove the
            bind in the console too.
  vip list  the added VIPs and their pools

  --prefix P   the lab brought up with namespace prefix P (tests' labs; default tide-glb)
  --json       status, up, vip list: the raw object`;

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
  if (s.addedVips.length > 0)
    out.push(`added VIPs: ${s.addedVips.map((v) => `${v.cidr} (pool ${v.pool})`).join(", ")}`);
  out.push("namespaces:");
  for (const n of s.namespaces) out.push(`  ${n.name.padEnd(20)} ${n.exists ? "exists" : "MISSING"}`);
  out.push("processes:");
  for (const p of s.processes)
    out.push(
      `  ${p.key.padEnd(16)} ${p.kind.padEnd(12)} pid ${String(p.pid).padEnd(8)} ` +
        (p.alive ? "alive" : `DEAD (npm run lab -- restart ${p.key})`),
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
      prefix: { type: "string" },
      pool: { type: "string" },
      streams: { type: "string" },
      "stream-lifetime-s": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const command = values.help ? "help" : positionals[0];
  const attached = async (): Promise<Lab> => {
    const lab = await attach({ prefix: values.prefix });
    if (!lab) throw new LabError("not_running", "no lab state (npm run lab -- up)");
    return lab;
  };
  const number = (flag: "streams" | "stream-lifetime-s"): number | undefined => {
    const text = values[flag];
    if (text === undefined) return undefined;
    if (!/^\d+(\.\d+)?$/.test(text)) throw new LabError("bad_argument", `--${flag} ${text}: not a number`);
    return Number(text);
  };
  const consoleTarget = () =>
    resolveConsoleTarget({ console: values.console, tokenFile: values["token-file"] });
  switch (command) {
    case "up": {
      const lab = await up({
        prefix: values.prefix,
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
      await down({ prefix: values.prefix, log });
      log("lab down");
      return 0;
    case "status": {
      const lab = await attach({ prefix: values.prefix });
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
      const lab = await attached();
      try {
        if (positionals[1] === "stop") {
          await lab.stopClientLoad();
          log("client load stopped");
        } else if (positionals[1] === "start") {
          await lab.startClientLoad({
            streams: number("streams"),
            streamLifetimeS: number("stream-lifetime-s"),
          });
          log(`client load running (log: ${lab.paths.log("client.load")})`);
        } else {
          throw new LabError("bad_argument", "load start|stop");
        }
      } finally {
        lab.close();
      }
      return 0;
    }
    case "restart": {
      const name = positionals[1];
      const lab = await attached();
      try {
        if (!name) {
          throw new LabError("bad_argument", `restart which process? ${lab.processNames.join(", ")}`);
        }
        const r = await lab.restartProcess(name);
        log(`${r.key} restarted: pid ${r.oldPid} -> ${r.pid}, ready in ${(r.ms / 1000).toFixed(1)} s`);
      } finally {
        lab.close();
      }
      return 0;
    }
    case "vip": {
      const action = positionals[1];
      const address = positionals[2];
      // A bad address is refused before the lab is looked at.
      if (address !== undefined) parseVip(address);
      const lab = await attached();
      try {
        if (action === "list") {
          const vips = lab.addedVips;
          if (values.json) process.stdout.write(`${JSON.stringify(vips, null, 2)}\n`);
          else {
            process.stdout.write(`${lab.vip}/32 pool ${lab.poolName} (the lab's own)\n`);
            for (const v of vips) process.stdout.write(`${v.cidr} pool ${v.pool}\n`);
          }
          return 0;
        }
        if ((action !== "add" && action !== "remove") || !address || positionals.length > 3) {
          throw new LabError(
            "bad_argument",
            "vip add <address>[/prefix] [--pool NAME] | vip remove <address> | vip list",
          );
        }
        if (action === "add") {
          const { vip, added } = await lab.addVip(address, { pool: values.pool });
          log(
            `${vip.cidr} ${added ? "routed" : "was routed already (applied again)"}: router -> ` +
              `${lab.ecmp.join(", ")}, on lo of ${lab.proxies.join(", ")}`,
          );
          if (lab.consoleState) {
            log(
              `next: add a bind for ${vip.cidr} to pool ${vip.pool} in the console (its Binds, or ` +
                `PUT /api/v1/pools/{id}/binds); until then the directors drop it (no_bind)`,
            );
          } else {
            log(
              `the lab's table binds it (tcp ${lab.topology.ports.http}, tcp+udp ${lab.topology.ports.stream}); pushed`,
            );
          }
        } else {
          const vip = await lab.removeVip(address);
          log(`${vip.cidr} removed (route, lo addresses${lab.consoleState ? "" : ", binds"})`);
          if (lab.consoleState) log(`remove its bind from pool ${vip.pool} in the console too`);
        }
      } finally {
        lab.close();
      }
      return 0;
    }
    case "help": {
      process.stdout.write(`${USAGE}\n`);
      const lab = await attach({ prefix: values.prefix });
      if (lab) process.stdout.write(`\nthis lab's processes: ${lab.processNames.join(", ")}\n`);
      return 0;
    }
    default:
      process.stderr.write(`${USAGE}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`lab: ${isLabError(e) ? `${e.code}: ` : ""}${(e as Error).message}\n`);
    process.exit(isLabError(e, "bad_argument") ? 2 : 1);
  },
);
