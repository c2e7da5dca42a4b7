import { describe, expect, it } from "vitest";
import { CONTAINER, WEB, cpus, namespace, probesOn, sample, series } from "./__fixtures__/observations";
import { diagnose } from "./diagnose";
import { round } from "./evaluation";
import { COUNTER_MAX, counterDelta, perSecond, rates, rollingWindows, windowRates } from "./rates";

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
