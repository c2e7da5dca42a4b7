import { describe, expect, it } from "vitest";
import { ProbesHello, ProbesLine } from "./probes-wire";

// Lines as dataplane/build/tide-probes wrote them (histograms and bucket bounds trimmed).
const HELLO = {
  type: "hello",
  version: "0.1.0",
  pid: 9323,
  at: 1795390832899,
  interval_ms: 1000,
  counters: "cumulative since attach; netrx max_us and wait_max_us since the previous sample",
  bucket_lo_us: [0, 1, 2, 4, 8, 16, 32],
  probes: {
    listen_backlog: { on: true },
    listen_overflow: { on: true },
    connect_latency: { on: true },
    port_parity: { on: true },
    netrx_softirq: { on: true },
    netrx_wait: { on: true },
    icmp_frag_needed: { on: false, reason: "tracepoint icmp:icmp_send not found" },
  },
  pin_dir: "/sys/fs/bpf/tide-probes",
};
const LISTEN = {
  type: "listen",
  at: 1795390833012,
  pid: 77,
  comm: "server",
  netns: 4026532000,
  family: "inet",
  port: 8080,
  requested: 1024,
  effective: 128,
  limited: true,
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

describe("ProbesLine", () => {
  it("accepts the loader's hello, listen and sample lines as they are", () => {
    for (const line of [HELLO, LISTEN, SAMPLE]) expect(ProbesLine.parse(line)).toEqual(line);
  });

  it("accepts a listen() with a negative backlog and a sample with only some sections", () => {
    expect(ProbesLine.safeParse({ ...LISTEN, requested: -1, limited: false }).success).toBe(true);
    expect(ProbesLine.safeParse({ type: "sample", at: 1 }).success).toBe(true);
  });

  it("keeps the reason of an off probe and drops fields a newer loader adds", () => {
    const hello = ProbesHello.parse({ ...HELLO, uptime_s: 3 });
    expect(hello.probes.icmp_frag_needed).toEqual({
      on: false,
      reason: "tracepoint icmp:icmp_send not found",
    });
    expect(hello).not.toHaveProperty("uptime_s");
  });

  it("refuses malformed lines", () => {
    const bad: unknown[] = [
      { ...SAMPLE, netrx: [{ ...SAMPLE.netrx[0], max_us: -1 }] },
      { ...SAMPLE, connect: [{ ...SAMPLE.connect[0], hist: ["1"] }] },
      { ...LISTEN, family: "ipx" },
      { ...LISTEN, port: 65536 },
      { ...HELLO, probes: { listen_backlog: { on: false } } },
      { ...HELLO, at: "now" },
      { type: "goodbye", at: 1 },
      "hello",
    ];
    for (const line of bad) expect(ProbesLine.safeParse(line).success, JSON.stringify(line)).toBe(false);
  });
});
