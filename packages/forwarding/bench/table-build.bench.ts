/**
 * Table build benchmark: `npm run -w @tide/forwarding bench`. Prints figures only (no assertions).
 *
 * Measures (median of RUNS, after 5 warm-up runs), wall and CPU time:
 *   - build from scratch (rendezvous order + assignment) for 16, 64, 256 IPv4 proxies
 *   - recompute after one proxy changes state (assignRows on a kept order), 64 proxies
 *   - GLBD v2 encode / decode of one table
 * Against the C builder (bench/c-builder.c: glb-director-cli's algorithm, compiled here, timed
 * in-process on the same table in this run), as a CPU-time ratio; goal <= 0.5x at every size.
 * The C builder with a one-pass top-2 instead of qsort is printed beside it for scale, and the
 * build with the JavaScript ranking (the reference, used where WebAssembly is unavailable).
 */
import {
  assignRows,
  buildTable,
  computeRendezvousOrder,
  decodeGlbd,
  encodeGlbd,
  type ProxyStatus,
  type TableSpec,
} from "../src/index";
import { setWasmRanking } from "../src/wasm/rank-wasm";
import { benchTable, cBuildCpuMs, compileCBuilder, writeGlbJson } from "./c-builder";

const RUNS = 7;
const cBuilder = compileCBuilder();

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Median wall time and median CPU time (user + system) in ms; CPU time is steadier on a busy machine. */
function time(fn: () => void, runs = RUNS): { wall: number; cpu: number } {
  for (let i = 0; i < 5; i++) fn(); // warm-up: let the JIT reach its optimising tier, as in a long-running service
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c = process.cpuUsage();
    const t = performance.now();
    fn();
    wall.push(performance.now() - t);
    const d = process.cpuUsage(c);
    cpu.push((d.user + d.system) / 1000);
  }
  return { wall: median(wall), cpu: median(cpu) };
}

const spec = (n: number): TableSpec => benchTable(n);

const rows: [string, { wall: number; cpu: number }, string][] = [];

for (const n of [16, 64, 256]) {
  const s = spec(n);
  const runs = n === 256 ? 5 : RUNS;
  const ms = time(() => buildTable(s), runs);
  const json = writeGlbJson(n);
  const c = median(cBuildCpuMs(cBuilder, json, runs));
  const top2 = median(cBuildCpuMs(cBuilder, json, runs, true));
  rows.push([`build ${n} proxies`, ms, `${(ms.cpu / c).toFixed(2)}x the C builder's CPU (goal <= 0.5x)`]);
  rows.push([`  C builder, ${n} (glb-director-cli's qsort)`, { wall: NaN, cpu: c }, "in-process, this run"]);
  rows.push([
    `  C builder, ${n}, top-2 pass`,
    { wall: NaN, cpu: top2 },
    `TS is ${(ms.cpu / top2).toFixed(2)}x`,
  ]);
  setWasmRanking(false);
  const js = time(() => buildTable(s), runs);
  setWasmRanking(true);
  rows.push([`  build ${n}, JavaScript ranking`, js, `${(js.cpu / c).toFixed(2)}x C (the reference path)`]);
}

{
  const s = spec(64);
  const order = computeRendezvousOrder(
    s.seed,
    s.backends.map((b) => b.address),
  );
  const states: ProxyStatus[] = s.backends.map((b) => ({ state: b.state, healthy: b.healthy }));
  let flip = false;
  const ms = time(() => {
    flip = !flip;
    states[17] = { state: flip ? "draining" : "active", healthy: true };
    assignRows(order, states);
  });
  rows.push([
    "recompute 64 after 1 state change",
    ms,
    `target < 20 ms; ${(20 / ms.wall).toFixed(1)}x headroom`,
  ]);
  const orderMs = time(() =>
    computeRendezvousOrder(
      s.seed,
      s.backends.map((b) => b.address),
    ),
  );
  rows.push(["  of which order (64, from scratch)", orderMs, "state-independent, reused"]);
}

{
  const table = buildTable(spec(64));
  const bytes = encodeGlbd([table]);
  rows.push(["encode GLBD (1 table)", time(() => encodeGlbd([table])), `${bytes.length} bytes`]);
  rows.push(["decode GLBD (1 table, validated)", time(() => decodeGlbd(bytes)), ""]);
}

const width = Math.max(...rows.map((r) => r[0].length));
console.log(`node ${process.version}, median of ${RUNS} runs (5 for 256 proxies)`);
console.log(`${"case".padEnd(width)}  ${"wall ms".padStart(9)}  ${"cpu ms".padStart(9)}  note`);
for (const [name, ms, note] of rows) {
  console.log(
    `${name.padEnd(width)}  ${(Number.isNaN(ms.wall) ? "-" : ms.wall.toFixed(2)).padStart(9)}  ${ms.cpu.toFixed(2).padStart(9)}  ${note}`,
  );
}
