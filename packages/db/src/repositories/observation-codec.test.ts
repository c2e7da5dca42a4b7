import { describe, expect, it } from "vitest";
import {
  CHUNK_CODEC_VERSION,
  decodeChunk,
  encodeChunk,
  minuteOf,
  type TimedSample,
} from "./observation-codec";

const MINUTE = new Date("2026-11-22T23:00:00.000Z");

/** A sample shaped like an Observation: rising counters, a histogram, strings, nulls, floats. */
function sample(i: number, extra: Record<string, unknown> = {}): TimedSample {
  const sampledAt = new Date(MINUTE.getTime() + i * 1000 + (i % 3));
  return {
    sampledAt,
    payload: {
      schemaVersion: 1,
      hostId: "lb-fra-03",
      sampledAt: sampledAt.toISOString(),
      kernelRelease: null,
      namespaces: [
        {
          netns: { inode: 4026531840, name: null, root: true },
          counters: { TcpExtListenOverflows: 3 * i, IpInReceives: 1_000_000 + 5000 * i, Huge: 2 ** 60 },
          sockstat: { tcpInuse: 800 + (i % 5), tcpOrphan: 0 },
          listeners: [],
          pids: [1, 612],
        },
      ],
      probeResults: {
        netRxSoftirq: [{ cpu: 0, durationUs: [0, 3 * i, 10 * i, i], intervalMaxUs: 180.5 + (i % 2) }],
      },
      probes: [{ probe: "listen_capped", state: "on", startedAt: "2026-11-22T22:00:00.000Z" }],
      ...extra,
    } as TimedSample["payload"],
  };
}

describe("encodeChunk / decodeChunk", () => {
  it("decodes exactly what was encoded, oldest first", () => {
    const samples = Array.from({ length: 60 }, (_, i) => sample(i));
    const shuffled = [...samples].reverse();
    expect(decodeChunk(MINUTE, encodeChunk(MINUTE, shuffled))).toEqual(samples);
  });

  it("keeps leaves that cannot be differences: floats, big and unsafe integers, type changes", () => {
    const samples = [
      sample(0, { x: 1.5, y: 2 ** 53 + 2, z: 7, w: "a", b: true }),
      sample(1, { x: 1.5, y: 2 ** 53 + 4, z: 7.25, w: "a", b: false }),
      sample(2, { x: 2, y: -(2 ** 53) - 8, z: "seven", w: 3, b: null }),
      sample(3, { x: 2, y: 0, z: null, w: 3, b: null }),
      // Same leaves but the ISO string of another instant: verbatim, not the time marker.
      sample(4, { x: 0, y: 0, z: "2026-11-22T23:00:00.000Z", w: 3, b: null }),
    ];
    expect(decodeChunk(MINUTE, encodeChunk(MINUTE, samples))).toEqual(samples);
  });

  it("follows shape changes (a namespace or listener appears, then goes)", () => {
    const samples = Array.from({ length: 20 }, (_, i) =>
      sample(i, i % 7 === 3 ? { extraNs: [{ inode: 5, counters: { A: i } }] } : {}),
    );
    samples[10]!.payload = { ...(samples[10]!.payload as object), probes: [] };
    expect(decodeChunk(MINUTE, encodeChunk(MINUTE, samples))).toEqual(samples);
  });

  it("stores an empty minute and a single sample", () => {
    expect(decodeChunk(MINUTE, encodeChunk(MINUTE, []))).toEqual([]);
    expect(decodeChunk(MINUTE, encodeChunk(MINUTE, [sample(59)]))).toEqual([sample(59)]);
  });

  it("is small: steady counters cost a few bytes per sample", () => {
    const samples = Array.from({ length: 60 }, (_, i) => sample(i));
    const raw = samples.reduce((n, s) => n + JSON.stringify(s.payload).length, 0);
    const encoded = encodeChunk(MINUTE, samples).length;
    expect(encoded * 10).toBeLessThan(raw);
  });

  it("refuses another codec version", () => {
    const data = encodeChunk(MINUTE, [sample(0)]);
    data[0] = CHUNK_CODEC_VERSION + 1;
    expect(() => decodeChunk(MINUTE, data)).toThrow(/codec version/);
  });
});

describe("minuteOf", () => {
  it("is the start of the UTC minute", () => {
    expect(minuteOf(new Date("2026-11-22T23:00:59.999Z"))).toEqual(MINUTE);
    expect(minuteOf(MINUTE)).toEqual(MINUTE);
  });
});
