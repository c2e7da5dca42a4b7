import { describe, expect, it } from "vitest";
import type { TimedSample } from "./observation-codec";
import {
  decodeRollup,
  encodeRollup,
  histogramQuantile,
  mergeHistograms,
  packRollups,
  rollupMinute,
  seriesOf,
  unpackRollups,
} from "./observation-rollup";

const T0 = Date.parse("2026-11-22T23:00:00.000Z");

/** Counters given per sample; the histogram is [0, a, b] absolute. */
function obs(at: number, c: { inRx: number; drops: number; hist: number[]; tcpInuse: number }): TimedSample {
  return {
    sampledAt: new Date(T0 + at),
    payload: {
      namespaces: [
        {
          netns: { inode: 7, name: null, root: true },
          counters: { IpInReceives: c.inRx, IpFragFails: 0 },
          sockstat: { tcpInuse: c.tcpInuse, tcpOrphan: 0 },
          listeners: [{ address: "0.0.0.0", port: 80, recvQ: 0, sendQ: 128, requestedBacklog: null }],
        },
      ],
      cpus: [],
      probeResults: {
        listenOverflow: [{ netnsInode: 7, port: 80, drops: c.drops }],
        connectLatency: [],
        netRxSoftirq: [{ cpu: 1, durationUs: c.hist, intervalMaxUs: 10 }],
        icmpFragNeeded: [],
      },
    },
  };
}

describe("rollupMinute", () => {
  // Irregular spacing (1 s, 2 s, 0.5 s, 1 s) and a reset of the drops counter at the 4th sample.
  const times = [0, 1000, 3000, 3500, 4500];
  const inRx = [100, 1100, 1500, 1500, 2500];
  const drops = [10, 12, 20, 3, 5];
  const hists = [
    [0, 1, 2],
    [0, 3, 2],
    [1, 3, 7, 1],
    [1, 3, 7, 1],
    [0, 0, 2],
  ];
  const inuse = [5, 9, 1, 4, 6];
  const samples = times.map((t, i) =>
    obs(t, { inRx: inRx[i]!, drops: drops[i]!, hist: hists[i]!, tcpInuse: inuse[i]! }),
  );

  /** The direct computation the rollup must match, pair by pair. */
  function direct(values: number[]) {
    const rates: number[] = [];
    let inc = 0;
    for (let i = 1; i < values.length; i++) {
      const d = values[i]! >= values[i - 1]! ? values[i]! - values[i - 1]! : values[i]!;
      inc += d;
      rates.push(d / ((times[i]! - times[i - 1]!) / 1000));
    }
    // Rates to RATE_DIGITS (4) significant digits as the rollup states; the increase is exact.
    const r3 = (x: number) => Number(x.toPrecision(4));
    return [r3(Math.min(...rates)), r3(Math.max(...rates)), r3(inc / 4.5), r3(rates[rates.length - 1]!), inc];
  }

  const r = rollupMinute([...samples].reverse());

  it("gives min/max/avg/last of counter rates and the exact increase", () => {
    expect(r.samples).toBe(5);
    expect(r.spanS).toBe(4.5);
    expect(r.rates["ns/7/IpInReceives"]).toEqual(direct(inRx));
    expect(r.rates["ns/7/IpInReceives"]).toEqual([0, 1000, 533.3, 1000, 2400]);
    // 10 -> 12 -> 20 -> 3 (reset: +3) -> 5
    expect(r.rates["listenOverflow/7/80"]).toEqual(direct(drops));
    expect(r.rates["listenOverflow/7/80"]![4]).toBe(2 + 8 + 3 + 2);
  });

  it("leaves out series that did not move and gauges that stayed zero", () => {
    expect(r.rates).not.toHaveProperty("ns/7/IpFragFails");
    expect(r.gauges).not.toHaveProperty("ns/7/sockstat/tcpOrphan");
    expect(r.gauges).not.toHaveProperty("ns/7/listen/0.0.0.0:80/recvQ");
  });

  it("keeps a namespace that was there but idle: nothing moved, no socket", () => {
    const idle = (at: number): TimedSample => ({
      sampledAt: new Date(T0 + at),
      payload: {
        namespaces: [
          {
            netns: { inode: 9, name: null, root: false },
            counters: { IpInReceives: 5 },
            sockstat: null,
            listeners: [],
          },
        ],
      },
    });
    const minute = rollupMinute([idle(0), idle(1000), idle(2000)]);
    expect(minute.rates).toEqual({});
    expect(Object.keys(minute.gauges)).toEqual(["ns/9/present"]);
    expect(minute.gauges["ns/9/present"]).toEqual([1, 1, 1, 1]);
  });

  it("gives min/max/avg/last of gauges", () => {
    expect(r.gauges["ns/7/sockstat/tcpInuse"]).toEqual([1, 9, 5, 6]);
    expect(r.gauges["netRx/1/intervalMaxUs"]).toEqual([10, 10, 10, 10]);
  });

  it("adds histogram increments exactly, resets counted from zero", () => {
    // +[0,2,0], +[1,0,5,1], +0, reset -> +[0,0,2]
    expect(r.histograms["netRx/1/durationUs"]).toEqual([1, 2, 7, 1]);
    // Equals the sum of increments computed bucket by bucket.
    const direct = mergeHistograms([0, 2, 0], [1, 0, 5, 1], [0, 0, 2]);
    expect(r.histograms["netRx/1/durationUs"]).toEqual(direct);
  });

  it("survives encoding", () => {
    expect(decodeRollup(encodeRollup(r))).toEqual(r);
  });

  it("of one sample has no rates", () => {
    const one = rollupMinute([samples[0]!]);
    expect(one).toMatchObject({ samples: 1, spanS: 0, rates: {}, histograms: {} });
    expect(one.gauges["ns/7/sockstat/tcpInuse"]).toEqual([5, 5, 5, 5]);
  });
});

describe("seriesOf", () => {
  it("names counters, gauges and histograms by where they come from", () => {
    const s = seriesOf(obs(0, { inRx: 1, drops: 2, hist: [0, 1], tcpInuse: 3 }).payload);
    expect([...s.counters.keys()].sort()).toEqual([
      "listenOverflow/7/80",
      "ns/7/IpFragFails",
      "ns/7/IpInReceives",
    ]);
    expect([...s.histograms.keys()]).toEqual(["netRx/1/durationUs"]);
  });
});

describe("histogramQuantile", () => {
  it("names the bucket the quantile falls in: the value is within a factor of 2", () => {
    // 10 values in [2,4), 80 in [4,8), 10 in [64,128)
    const h = [0, 10, 80, 0, 0, 0, 10];
    expect(histogramQuantile(h, 0.05)).toEqual({ lowUs: 2, highUs: 4 });
    expect(histogramQuantile(h, 0.5)).toEqual({ lowUs: 4, highUs: 8 });
    expect(histogramQuantile(h, 0.9)).toEqual({ lowUs: 4, highUs: 8 });
    expect(histogramQuantile(h, 0.99)).toEqual({ lowUs: 64, highUs: 128 });
    expect(histogramQuantile([3], 0.5)).toEqual({ lowUs: 0, highUs: 2 });
    expect(histogramQuantile([0, 0], 0.5)).toBeNull();
  });
});

describe("packRollups / unpackRollups", () => {
  /** Minute m of an hour: counters rising with m; the overflow probe only in even minutes. */
  const minute = (m: number) => {
    const samples = [0, 1, 2].map((k) => {
      const s = obs(m * 60_000 + k * 1000, {
        inRx: 100 * m + 7 * k,
        drops: m + k,
        hist: [0, m, k],
        tcpInuse: m,
      });
      if (m % 2 === 1)
        (s.payload as { probeResults: { listenOverflow: unknown[] } }).probeResults.listenOverflow = [];
      return s;
    });
    return { minute: new Date(T0 + m * 60_000), rollup: rollupMinute(samples) };
  };
  const hour = Array.from({ length: 60 }, (_, m) => minute(m)).filter((_, m) => m !== 17);

  it("gives back every minute as it was, series absent where they were absent", () => {
    const back = unpackRollups(new Date(T0), packRollups(new Date(T0), [...hour].reverse()));
    expect(back).toEqual(hour);
    expect(back[1]!.rollup.rates).not.toHaveProperty("listenOverflow/7/80");
    expect(back[2]!.rollup.rates["listenOverflow/7/80"]).toBeDefined();
    expect(back[0]!.rollup.gauges).not.toHaveProperty("ns/7/sockstat/tcpInuse"); // all zero in minute 0
  });

  it("is smaller than the minutes one by one", () => {
    const apart = hour.reduce((n, p) => n + encodeRollup(p.rollup).length, 0);
    expect(packRollups(new Date(T0), hour).length * 2).toBeLessThan(apart);
  });
});
