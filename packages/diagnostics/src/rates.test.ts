import { describe, expect, it } from "vitest";
import type { NetnsRef, Observation } from "@tide/contracts";
import { CONTAINER, ROOT, WEB, cpus, namespace, probesOn, sample, series } from "./__fixtures__/observations";
import { diagnose } from "./diagnose";
import { round } from "./evaluation";
import {
  COUNTER_MAX,
  counterDelta,
  perSecond,
  rates,
  rollingWindows,
  windowRates,
  NamespaceWindowSums,
  type CounterDelta,
} from "./rates";

describe("rates", () => {
  it("turns absolute counters into per-second rates", () => {
    const a = sample(0, { namespaces: [namespace(0, { ratePerS: { TcpExtListenOverflows: 3 } })] });
    const b = sample(10, { namespaces: [namespace(10, { ratePerS: { TcpExtListenOverflows: 3 } })] });
    const r = rates(a, b);
    expect(r.seconds).toBe(10);
    const d = r.namespaces.get(4026531840)!.counters.get("TcpExtListenOverflows")!;
    expect(d).toEqual({ delta: 30, seconds: 10 });
    expect(perSecond(d)).toBe(3);
  });

  it("leaves out a counter that went down (reset) instead of inventing a rate", () => {
    const a = sample(0, { namespaces: [namespace(0, { counters: { TcpExtListenOverflows: 5_000 } })] });
    const b = sample(1, { namespaces: [namespace(1, { counters: { TcpExtListenOverflows: 7 } })] });
    const ns = rates(a, b).namespaces.get(4026531840)!;
    expect(ns.counters.has("TcpExtListenOverflows")).toBe(false);
    expect(ns.resets).toEqual(["TcpExtListenOverflows"]);
    expect(ns.counters.get("TcpExtPruneCalled")).toEqual({ delta: 0, seconds: 1 });
  });

  it("gives no rate to namespaces present in one sample only, and lists them", () => {
    const a = sample(0, { namespaces: [namespace(0), namespace(0, { netns: WEB })] });
    const b = sample(1, { namespaces: [namespace(1), namespace(1, { netns: CONTAINER, pids: [4242] })] });
    const r = rates(a, b);
    expect([...r.namespaces.keys()]).toEqual([4026531840]);
    expect(r.appeared).toEqual([CONTAINER]);
    expect(r.disappeared).toEqual([WEB]);
  });

  it("drops probe deltas across a probe reload", () => {
    const counts = (drops: number) => ({ listenOverflow: [{ netnsInode: WEB.inode, port: 8080, drops }] });
    const a = sample(0, { probeResults: counts(900) });
    const b = sample(1, {
      probeResults: counts(12),
      probes: probesOn(undefined, "2026-11-22T23:00:00.500Z"),
    });
    expect(rates(a, b).listenOverflow.size).toBe(0);
    const c = sample(2, {
      probeResults: counts(20),
      probes: probesOn(undefined, "2026-11-22T23:00:00.500Z"),
    });
    expect(rates(b, c).listenOverflow.get(`${WEB.inode}:8080`)).toMatchObject({ delta: 8, seconds: 1 });
  });

  it("counts a port the probe reports for the first time from zero", () => {
    const a = sample(0, { probeResults: { listenOverflow: [] } });
    const b = sample(2, {
      probeResults: { listenOverflow: [{ netnsInode: WEB.inode, port: 80, drops: 6 }] },
    });
    expect(rates(a, b).listenOverflow.get(`${WEB.inode}:80`)).toMatchObject({ delta: 6, seconds: 2 });
  });

  it("refuses samples of two hosts, and gives nothing for a non-increasing time", () => {
    expect(() => rates(sample(0), sample(1, { hostId: "lb-fra-04" }))).toThrow(/two hosts/);
    expect(rates(sample(5), sample(5)).namespaces.size).toBe(0);
  });
});

describe("windowRates", () => {
  it("is null for a single sample", () => {
    expect(windowRates([sample(0)])).toBeNull();
  });

  it("averages over the intervals without a reset", () => {
    // 2/s for 30 s, counter reset (namespace counters restart at 0), then 2/s again.
    const obs = series(61, (t) =>
      sample(t, {
        namespaces: [
          namespace(t, {
            counters: { TcpExtListenOverflows: t <= 30 ? 10_000 + 2 * t : 2 * (t - 31) },
          }),
        ],
      }),
    );
    const d = windowRates(obs)!.namespaces.get(4026531840)!.counters.get("TcpExtListenOverflows")!;
    expect(d.seconds).toBe(59);
    expect(perSecond(d)).toBe(2);
  });
});

// Deterministic pseudo-random (mulberry32), so a failure repeats.
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const RENAMED: NetnsRef = { ...WEB, name: "web-2" };

/** A minute with namespaces coming and going (and renamed), counters missing, resetting or invalid, a repeated instant. */
function churn(seed: number): Observation[] {
  const rnd = random(seed);
  const values = new Map<string, number>();
  const value = (key: string) => {
    const r = rnd();
    const v =
      r < 0.04
        ? Math.floor(rnd() * 10)
        : r < 0.06
          ? COUNTER_MAX * 2
          : (values.get(key) ?? 1_000) + Math.floor(rnd() * 50);
    values.set(key, v);
    return v;
  };
  const out: Observation[] = [];
  let t = 0;
  for (let i = 0; i < 61; i++) {
    t += rnd() < 0.05 ? 0 : rnd() < 0.1 ? 3 : 1;
    const netnses = [
      ROOT,
      ...(rnd() < 0.8 ? [i > 30 ? RENAMED : WEB] : []),
      ...(rnd() < 0.5 ? [CONTAINER] : []),
    ];
    out.push(
      sample(t, {
        namespaces: netnses.map((netns) => {
          const counters: Record<string, number> = {};
          for (const name of [
            "TcpExtListenOverflows",
            "TcpExtListenDrops",
            "IpFragFails",
            "TcpActiveOpens",
          ]) {
            if (rnd() < 0.9) counters[name] = value(`${netns.inode}:${name}`);
          }
          return { ...namespace(t, { netns }), counters };
        }),
      }),
    );
  }
  return out;
}

describe("windowRates adds every interval's rates", () => {
  /** What windowRates must give for the namespaces: rates() of each interval, added up. */
  function addedUp(samples: readonly Observation[]) {
    const sum = new Map<number, { netns: NetnsRef; counters: Map<string, CounterDelta>; resets: string[] }>();
    for (let i = 1; i < samples.length; i++) {
      for (const [inode, ns] of rates(samples[i - 1]!, samples[i]!).namespaces) {
        const into = sum.get(inode) ?? {
          netns: ns.netns,
          counters: new Map<string, CounterDelta>(),
          resets: [] as string[],
        };
        into.netns = ns.netns;
        for (const [name, d] of ns.counters) {
          const c = into.counters.get(name);
          into.counters.set(
            name,
            c ? { delta: c.delta + d.delta, seconds: c.seconds + d.seconds } : { ...d },
          );
        }
        for (const r of ns.resets) if (!into.resets.includes(r)) into.resets.push(r);
        sum.set(inode, into);
      }
    }
    return sum;
  }

  it.each([1, 2, 3, 4, 5, 6, 7, 8])("for namespace counters, resets and identities (seed %i)", (seed) => {
    const samples = churn(seed);
    const expected = addedUp(samples);
    const got = windowRates(samples)!;
    // The window did see resets, missing counters and a namespace that came back renamed.
    expect([...expected.values()].some((n) => n.resets.length > 0)).toBe(true);
    expect(got.namespaces.get(WEB.inode)?.netns).toEqual(RENAMED);
    expect(got.namespaces).toEqual(expected);
    expect(got.seconds).toBe(
      samples.reduce((s, o, i) => s + (i === 0 ? 0 : rates(samples[i - 1]!, o).seconds), 0),
    );
  });
});

describe("NamespaceWindowSums: windowRates slid instead of summed again", () => {
  /** A host's samples as a real one sends them: 3 namespaces of 300 counters each, rising. */
  function host(seed: number, n: number, events: Record<number, (o: Observation) => void> = {}) {
    const rnd = random(seed);
    const names = Array.from({ length: 300 }, (_, i) => `TcpExtCounter${i}`);
    const values = new Map<string, number>();
    const out: Observation[] = [];
    let t = 0;
    for (let i = 0; i < n; i++) {
      t += rnd() < 0.1 ? 2 : 1;
      const o = sample(t, {
        namespaces: [ROOT, WEB, CONTAINER].map((netns) => {
          const counters: Record<string, number> = {};
          for (const name of names) {
            const key = `${netns.inode}:${name}`;
            const v =
              (values.get(key) ?? Math.floor(rnd() * 1e9)) + (rnd() < 0.7 ? 0 : Math.floor(rnd() * 500));
            values.set(key, v);
            counters[name] = v;
          }
          return { ...namespace(t, { netns }), counters };
        }),
      });
      events[i]?.(o);
      out.push(o);
    }
    return out;
  }
  /** Every field, Maps as their entries in order: equal strings are equal rates, order included. */
  const canon = (r: unknown) =>
    JSON.stringify(r, (_k, v: unknown) => (v instanceof Map ? [...v.entries()] : v));
  /** The evaluator's windows: the last 60 s, moving 1 to 7 samples at a time. */
  function* windows(samples: readonly Observation[], seed: number) {
    const rnd = random(seed);
    for (let end = 2; end <= samples.length; end += 1 + Math.floor(rnd() * 7)) {
      const newest = Date.parse(samples[end - 1]!.sampledAt);
      yield samples.slice(0, end).filter((o) => Date.parse(o.sampledAt) >= newest - 60_000);
    }
  }

  it.each([1, 2, 3])("gives windowRates' rates exactly, sliding a real host's minute (seed %i)", (seed) => {
    const samples = host(seed, 200);
    const sums = new NamespaceWindowSums();
    for (const w of windows(samples, seed)) expect(canon(windowRates(w, sums))).toBe(canon(windowRates(w)));
    expect(sums.stats.summed).toBe(1);
    expect(sums.stats.slid).toBeGreaterThan(20);
    expect(sums.stats.notUniform).toBe(0);
  });

  it("sums nothing while a window holds a reset, a missing counter or a new namespace, then slides again", () => {
    const samples = host(4, 320, {
      60: (o) => (o.namespaces[1]!.counters.TcpExtCounter7 = 3), // reset
      120: (o) => delete o.namespaces[2]!.counters.TcpExtCounter9, // missing once
      200: (o) =>
        o.namespaces.push({ ...o.namespaces[2]!, netns: { inode: 4026532999, name: null, root: false } }),
    });
    const sums = new NamespaceWindowSums();
    const seen: string[] = [];
    for (const w of windows(samples, 4)) {
      const before = { ...sums.stats };
      expect(canon(windowRates(w, sums))).toBe(canon(windowRates(w)));
      seen.push(
        sums.stats.slid > before.slid ? "slid" : sums.stats.summed > before.summed ? "summed" : "not",
      );
    }
    // Each event stops the sums for as long as a window holds it; every time, summing resumes.
    const runs = seen.filter((x, i) => i === 0 || x !== seen[i - 1]);
    expect(runs).toEqual([
      "summed",
      "slid",
      "not",
      "summed",
      "slid",
      "not",
      "summed",
      "slid",
      "not",
      "summed",
      "slid",
    ]);
  });

  it("sums a window of other objects anew, and agrees on windows that are not uniform at all", () => {
    const samples = host(5, 80);
    const sums = new NamespaceWindowSums();
    const w = samples.slice(10, 70);
    windowRates(w, sums);
    const copy = structuredClone(w);
    expect(canon(windowRates(copy, sums))).toBe(canon(windowRates(w)));
    expect(sums.stats).toEqual({ slid: 0, summed: 2, notUniform: 0 });
    for (const seed of [1, 2, 3, 4]) {
      const c = churn(seed);
      expect(canon(windowRates(c, sums))).toBe(canon(windowRates(c)));
    }
  });

  it("reads the first sample by the others' names, as windowRates does", () => {
    const w = host(8, 61);
    const first = w[0]!.namespaces[1]!;
    // An extra counter and another order in the first sample only: neither is in any interval.
    first.counters = { TcpExtOnlyHere: 5, ...Object.fromEntries(Object.entries(first.counters).reverse()) };
    const sums = new NamespaceWindowSums();
    expect(canon(windowRates(w, sums))).toBe(canon(windowRates(w)));
    expect(sums.stats).toEqual({ slid: 0, summed: 1, notUniform: 0 });
  });

  it("keeps at most maxHosts hosts, and each host's sums apart", () => {
    const a = host(6, 90);
    const b = host(7, 90).map((o) => ({ ...o, hostId: "lb-fra-04" }));
    const sums = new NamespaceWindowSums(1);
    for (const [wa, wb] of [0, 5, 10, 15].map((k) => [a.slice(k, k + 61), b.slice(k, k + 61)])) {
      expect(canon(windowRates(wa!, sums))).toBe(canon(windowRates(wa!)));
      expect(canon(windowRates(wb!, sums))).toBe(canon(windowRates(wb!)));
    }
    expect(sums.size).toBe(1);
    expect(sums.stats).toEqual({ slid: 0, summed: 8, notUniform: 0 });
  });
});

describe("rollingWindows", () => {
  it("splits hosts and keeps the last minute before each host's latest sample", () => {
    const a = series(90, (t) => sample(t));
    const b = series(5, (t) => sample(t + 200, { hostId: "lb-fra-04" }));
    const windows = rollingWindows([...b, ...a].reverse());
    expect(windows.map((w) => w.hostId)).toEqual(["lb-fra-03", "lb-fra-04"]);
    expect(windows[0]!.samples).toHaveLength(61);
    expect(windows[0]!.samples[0]!.sampledAt).toBe(a[29]!.sampledAt);
    expect(windows[0]!.rates!.seconds).toBe(60);
    expect(windows[1]!.samples).toHaveLength(5);
  });
});

describe("rates are finite by construction (issue 11 item 8)", () => {
  it("leaves out an interval with a reading above a u64, like a reset", () => {
    expect(counterDelta(5, COUNTER_MAX, 1)).toEqual({ delta: COUNTER_MAX - 5, seconds: 1 });
    expect(counterDelta(5, 1.7e308, 1)).toBeNull();
    expect(counterDelta(1.7e308, 1.7e308, 1)).toBeNull();
  });

  it("unwraps a u32 counter that went round, and calls a bigger fall a reset", () => {
    expect(counterDelta(2 ** 32 - 10, 5, 1, true)).toEqual({ delta: 15, seconds: 1 });
    expect(counterDelta(2 ** 32 - 10, 2 ** 31, 1, true)).toBeNull();
    expect(counterDelta(2 ** 32 - 10, 5, 1)).toBeNull(); // a u64 counter that went down was reset
    expect(counterDelta(1, 2 ** 32, 1, true)).toBeNull(); // not a u32 reading
    const a = sample(0, { cpus: cpus(0, 1, () => ({ softnetProcessed: 2 ** 32 - 100 })) });
    const b = sample(1, { cpus: cpus(1, 1, () => ({ softnetProcessed: 900 })) });
    expect(rates(a, b).cpus.get(0)!.softnetProcessed).toEqual({ delta: 1_000, seconds: 1 });
  });

  it("gives only finite evidence when one reading jumps to 1.7e308", () => {
    const overflows = (t: number) => (t === 30 ? 1.7e308 : 5_000 + 10 * t);
    const window = series(60, (t) =>
      sample(t, { namespaces: [namespace(t, { counters: { TcpExtListenOverflows: overflows(t) } })] }),
    );
    const findings = diagnose(window);
    expect(findings.map((f) => f.kind)).toContain("accept_queue_overflow");
    for (const f of findings)
      for (const e of f.evidence) {
        expect(Number.isFinite(e.value), `${f.kind} ${e.metric}`).toBe(true);
        if (e.ratePerSecond !== null) expect(Number.isFinite(e.ratePerSecond)).toBe(true);
      }
  });

  it("rounds a value too large to scale to itself, not Infinity", () => {
    expect(round(1.7e308)).toBe(1.7e308);
    expect(round(2.34567)).toBe(2.346);
  });
});
