import { describe, expect, it } from "vitest";
import { offReason, ProbeState, rebucket } from "./probe-state";

// Real lines from dataplane/build/tide-probes (trimmed histograms), plus a listen event.
const LO = [
  0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144,
  524288, 1048576, 2097152, 4194304, 8388608, 16777216, 33554432,
];
const HELLO = {
  type: "hello",
  version: "0.1.0",
  pid: 9323,
  at: 1795390832899,
  interval_ms: 1000,
  bucket_lo_us: LO,
  probes: {
    listen_backlog: { on: true },
    listen_overflow: { on: true },
    connect_latency: { on: true },
    port_parity: { on: true },
    netrx_softirq: { on: true },
    netrx_wait: { on: true },
    icmp_frag_needed: { on: false, reason: "tracepoint icmp:icmp_send not found" },
  },
};
const SAMPLE = {
  type: "sample",
  at: 1795390833900,
  listen_overflow: [{ netns: 4026532000, port: 8080, drops: 17 }],
  connect: [
    {
      netns: 4026531833,
      pid: 42,
      comm: "curl",
      calls: 3,
      errors: 0,
      eaddrnotavail: 1,
      total_us: 90,
      sport_even: 2,
      sport_odd: 1,
      hist: [0, 1, 1, 0, 0, 1],
    },
  ],
  netrx: [
    {
      cpu: 1,
      runs: 5,
      total_us: 20,
      max_us: 7,
      hist: [1, 2, 2],
      waits: 0,
      wait_total_us: 0,
      wait_max_us: 0,
      wait_hist: [],
    },
  ],
};

describe("ProbeState", () => {
  it("reports every probe off before hello", () => {
    const s = new ProbeState();
    expect(s.probes().every((p) => p.state === "off")).toBe(true);
  });

  it("maps loader probes to contract probes and folds the latest sample", () => {
    const s = new ProbeState();
    s.handle(HELLO);
    const byName = Object.fromEntries(s.probes().map((p) => [p.probe, p]));
    expect(byName.listen_capped).toMatchObject({ state: "on", startedAt: new Date(HELLO.at).toISOString() });
    expect(byName.icmp_frag_needed).toMatchObject({ state: "off", reason: "tracepoint_missing" });
    s.handle(SAMPLE);
    s.handle({
      type: "listen",
      at: 1,
      pid: 77,
      comm: "server",
      netns: 4026532000,
      family: "inet",
      port: 8080,
      requested: 1024,
      effective: 128,
      limited: true,
    });
    const r = s.probeResults();
    expect(r.listenOverflow).toEqual([{ netnsInode: 4026532000, port: 8080, drops: 17 }]);
    expect(r.connectLatency).toEqual([
      {
        netnsInode: 4026531833,
        pid: 42,
        comm: "curl",
        latencyUs: [1, 1, 0, 0, 1],
        eaddrnotavail: 1,
        evenPorts: 2,
        oddPorts: 1,
      },
    ]);
    expect(r.netRxSoftirq).toEqual([{ cpu: 1, durationUs: [3, 2], intervalMaxUs: 7 }]);
    expect(r.listenCapped).toEqual([
      { netnsInode: 4026532000, port: 8080, pid: 77, comm: "server", requested: 1024, effective: 128 },
    ]);
    expect(r.icmpFragNeeded).toEqual([]);
    // the listener closed: it disappears from listenCapped
    expect(s.probeResults(new Set()).listenCapped).toEqual([]);
  });

  it("setOff clears results", () => {
    const s = new ProbeState();
    s.handle(HELLO);
    s.handle(SAMPLE);
    s.setOff("loader_crashed", "exited");
    expect(s.probeResults().listenOverflow).toEqual([]);
    expect(s.probes()[0]).toMatchObject({ state: "off", reason: "loader_crashed" });
  });
});

describe("rebucket", () => {
  it("merges [0,1) and [1,2) into bucket 0 and shifts the rest", () => {
    expect(rebucket([1, 2, 3, 4], LO)).toEqual([3, 3, 4]);
    expect(rebucket([0, 0, 0], LO)).toEqual([]);
  });
});

describe("offReason", () => {
  it("maps loader texts to the closed set", () => {
    expect(offReason("Operation not permitted (EPERM)")).toBe("missing_privilege");
    expect(offReason("no kernel BTF")).toBe("btf_missing");
    expect(offReason("verifier rejected")).toBe("load_failed");
  });
});
