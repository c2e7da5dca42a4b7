/**
 * Table build benchmark: `npm run -w @tide/forwarding bench`. Prints figures only (no assertions).
 *
 * Measures (median of RUNS, after 5 warm-up runs), wall and CPU time:
 *   - build from scratch (rendezvous order + assignment) for 16, 64, 256 IPv4 proxies
 *   - recompute after one proxy changes state (assignRows on a kept order), 64 proxies
 *   - GLBD v2 encode / decode of one table
 * Reference: glb-director's C builder on this machine type, ~50 ms / 250 ms / 1.2 s.
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

const RUNS = 7;
const C_REFERENCE_MS: Record<number, number> = { 16: 50, 64: 250, 256: 1200 };

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

function spec(n: number): TableSpec {
  return {
    hashKey: Uint8Array.from({ length: 16 }, (_, i) => i * 17 + 1),
    seed: Uint8Array.from({ length: 16 }, (_, i) => 255 - i * 13),
    binds: [{ address: "203.0.113.10", prefixBits: 32, proto: "tcp", portStart: 443, portEnd: 443 }],
    backends: Array.from({ length: n }, (_, i) => ({
      address: `10.${20 + (i >> 8)}.${i & 255}.${((i * 7) % 250) + 1}`,
      state: "active" as const,
      healthy: true,
    })),
  };
}

const rows: [string, { wall: number; cpu: number }, string][] = [];

for (const n of [16, 64, 256]) {
  const s = spec(n);
  const ms = time(() => buildTable(s), n === 256 ? 5 : RUNS);
  const ref = C_REFERENCE_MS[n]!;
  rows.push([
    `build ${n} proxies`,
    ms,
    `${(ref / ms.wall).toFixed(2)}x vs C builder (~${ref} ms), by wall time`,
  ]);
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
    `${name.padEnd(width)}  ${ms.wall.toFixed(2).padStart(9)}  ${ms.cpu.toFixed(2).padStart(9)}  ${note}`,
  );
}
