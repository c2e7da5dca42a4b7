/**
 * tidectl start-up benchmark: `npm run -w @tide/tidectl bench`. Prints figures only (no assertions).
 *
 * Whole processes, CPU time (user + system of the child, all threads), mean of RUNS after 3
 * warm-up runs, all in this run on the same machine:
 *   - bare node (`node -e 0`): the floor any Node tool pays
 *   - `tidectl --help`: goal within 15 ms of bare node
 *   - `tidectl table build` of a 16-proxy table vs the C builder's whole process
 *     (packages/forwarding/bench/c-builder.c: glb-director-cli build-config's algorithm)
 * Child CPU is read from /proc/self/stat (cutime + cstime, clock ticks), so it is summed over
 * RUNS and divided: one tick (10 ms) over RUNS runs is the resolution. The cases run in turn
 * (bare, help, build, C, bare, …) so that load from other work on the machine falls on all alike.
 * The children run without NODE_EXTRA_CA_CERTS: Node loads that file at start-up whatever the
 * script (~80 ms of CPU for Debian's bundle of ~140 CAs), a cost of the environment, not of
 * tidectl; when it is set, bare node with it is measured too and printed apart.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const RUNS = 40;
const TICK_MS = 10; // USER_HZ = 100 on Linux
const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "../../..");
const tidectl = resolve(here, "../dist/tidectl.js");
const dir = mkdtempSync(join(tmpdir(), "tidectl-bench-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

execFileSync("npm", ["run", "-w", "@tide/tidectl", "build"], { cwd: repoRoot, stdio: "ignore" });
const cBuilder = join(dir, "c-builder");
execFileSync(process.env.CC ?? "cc", [
  "-std=gnu11",
  "-O2",
  `-I${join(repoRoot, "dataplane/common")}`,
  "-o",
  cBuilder,
  join(repoRoot, "packages/forwarding/bench/c-builder.c"),
  "-ljansson",
]);

// The forwarding benchmark's 16-proxy table, as glb-director JSON.
const hex = (f: (i: number) => number) =>
  Buffer.from(Array.from({ length: 16 }, (_, i) => f(i))).toString("hex");
const json = join(dir, "table-16.json");
writeFileSync(
  json,
  JSON.stringify({
    tables: [
      {
        hash_key: hex((i) => i * 17 + 1),
        seed: hex((i) => 255 - i * 13),
        binds: [{ ip: "203.0.113.10", proto: "tcp", port: 443 }],
        backends: Array.from({ length: 16 }, (_, i) => ({
          ip: `10.${20 + (i >> 8)}.${i & 255}.${((i * 7) % 250) + 1}`,
          state: "active",
          healthy: true,
        })),
      },
    ],
  }),
);

function childCpuMs(): number {
  const f = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ");
  // Fields 16 and 17 of stat (cutime, cstime) are 14 and 15 after "pid (comm) ".
  return (Number(f[13]) + Number(f[14])) * TICK_MS;
}

type Measure = { cpu: number; wall: number };
interface Case {
  cmd: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}
const { NODE_EXTRA_CA_CERTS: extraCaCerts, ...childEnv } = process.env;

/** Mean CPU ms and wall ms of one run of each case, the cases run in turn. */
function measure(cases: Case[]): Measure[] {
  const totals = cases.map(() => ({ cpu: 0, wall: 0 }));
  const run = ({ cmd, args, env }: Case) => {
    const r = spawnSync(cmd, args, { stdio: "ignore", env });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}`);
  };
  for (let i = 0; i < 3; i++) cases.forEach(run);
  for (let i = 0; i < RUNS; i++)
    cases.forEach((one, k) => {
      const c = childCpuMs();
      const t = performance.now();
      run(one);
      totals[k]!.cpu += childCpuMs() - c;
      totals[k]!.wall += performance.now() - t;
    });
  return totals.map((m) => ({ cpu: m.cpu / RUNS, wall: m.wall / RUNS }));
}

const node = process.execPath;
const nodeCase = (args: string[]): Case => ({ cmd: node, args, env: childEnv });
const cases = [
  nodeCase(["-e", "0"]),
  nodeCase([tidectl, "--help"]),
  nodeCase([tidectl, "table", "build", json, join(dir, "ts.bin")]),
  { cmd: cBuilder, args: ["build-config", json, join(dir, "c.bin")], env: childEnv },
];
if (extraCaCerts) cases.push({ cmd: node, args: ["-e", "0"], env: process.env });
const [bare, help, build, c, bareWithCas] = measure(cases) as [Measure, Measure, Measure, Measure, Measure?];

const rows: [string, Measure, string][] = [
  ["bare node (node -e 0)", bare, "the floor"],
  ["tidectl --help", help, `+${(help.cpu - bare.cpu).toFixed(1)} ms CPU over bare node (goal <= 15)`],
  ["tidectl table build, 16 proxies", build, `${(build.cpu / c.cpu).toFixed(2)}x C (goal <= 1.5x)`],
  ["C builder build-config, 16 proxies", c, `bare node alone is ${(bare.cpu / c.cpu).toFixed(2)}x C`],
];
if (bareWithCas)
  rows.push([
    "bare node, NODE_EXTRA_CA_CERTS as set here",
    bareWithCas,
    `+${(bareWithCas.cpu - bare.cpu).toFixed(1)} ms for any node process: not in the rows above`,
  ]);
const width = Math.max(...rows.map((r) => r[0].length));
console.log(`node ${process.version}, whole processes, mean of ${RUNS} runs each, the cases in turn`);
console.log(`${"case".padEnd(width)}  ${"cpu ms".padStart(8)}  ${"wall ms".padStart(8)}  note`);
for (const [name, m, note] of rows)
  console.log(
    `${name.padEnd(width)}  ${m.cpu.toFixed(1).padStart(8)}  ${m.wall.toFixed(1).padStart(8)}  ${note}`,
  );
