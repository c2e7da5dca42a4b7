import { describe, expect, it } from "vitest";
import { CONTAINER, WEB, namespace, probesOn, sample, series } from "./__fixtures__/observations";
import { perSecond, rates, rollingWindows, windowRates } from "./rates";

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
