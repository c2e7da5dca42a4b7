/**
 * Findings evaluation benchmark: `npm run -w @tide/diagnostics bench`. Prints figures only.
 *
 * What the console's finding evaluator does for one host every EVALUATION_INTERVAL_MS (5 s):
 * diagnose() over the host's last minute, which has moved on by 5 samples. The host is a real
 * one's size: 3 namespaces of 318 counters (what /proc/net/netstat and /proc/net/snmp hold on a
 * Debian 13 kernel), 2 CPUs, the probes on. Measured with and without NamespaceWindowSums (the
 * namespace counters slid instead of added up again), the two interleaved in rounds, as the CPU
 * time of one evaluation (median of ROUNDS rounds of STEPS evaluations), and windowRates() alone.
 */
import type { Observation } from "@tide/contracts";
import { CONTAINER, ROOT, WEB, namespace, sample } from "../src/__fixtures__/observations";
import { diagnose, NamespaceWindowSums, windowRates } from "../src/index";

const COUNTERS = 318;
const STEP = 5;
const STEPS = 60;
const ROUNDS = 9;

function host(n: number): Observation[] {
  const names = Array.from({ length: COUNTERS }, (_, i) => `TcpExtBench${i}`);
  let x = 1;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31);
  const values = new Map<string, number>();
  return Array.from({ length: n }, (_, t) =>
    sample(t, {
      namespaces: [ROOT, WEB, CONTAINER].map((netns) => {
        const base = namespace(t, { netns, ratePerS: { TcpExtListenOverflows: netns === WEB ? 4 : 0 } });
        const counters: Record<string, number> = { ...base.counters };
        for (const name of names) {
          const key = `${netns.inode}:${name}`;
          const v = (values.get(key) ?? next()) + (next() % 4 === 0 ? next() % 1000 : 0);
          values.set(key, v);
          counters[name] = v;
        }
        return { ...base, counters };
      }),
    }),
  );
}

const samples = host(61 + STEP * STEPS);
/** The evaluator's windows: the last 61 samples (60 s), moving STEP samples at a time. */
const windows = Array.from({ length: STEPS }, (_, i) => samples.slice(i * STEP, i * STEP + 61));

function cpuMsPerCall(fn: (w: Observation[]) => unknown): number {
  const c = process.cpuUsage();
  for (const w of windows) fn(w);
  const d = process.cpuUsage(c);
  return (d.user + d.system) / 1000 / windows.length;
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
const cases = {
  "diagnose()": (sums?: NamespaceWindowSums) => (w: Observation[]) => diagnose(w, { namespaceSums: sums }),
  "windowRates()": (sums?: NamespaceWindowSums) => (w: Observation[]) => windowRates(w, sums),
};
console.log(
  `node ${process.version}, one host of 3 x ${COUNTERS} counters, windows of 61 samples moving ${STEP} at a time`,
);
console.log("case                          full ms   slid ms   slid/full");
for (const [name, make] of Object.entries(cases)) {
  const full: number[] = [];
  const slid: number[] = [];
  for (let r = 0; r < ROUNDS + 2; r++) {
    const sums = new NamespaceWindowSums();
    const a = cpuMsPerCall(make());
    const b = cpuMsPerCall(make(sums));
    if (r < 2) continue; // warm-up rounds
    full.push(a);
    slid.push(b);
  }
  const f = median(full);
  const s = median(slid);
  console.log(
    `${name.padEnd(28)}${f.toFixed(3).padStart(8)}${s.toFixed(3).padStart(10)}${(s / f).toFixed(2).padStart(12)}x`,
  );
}
