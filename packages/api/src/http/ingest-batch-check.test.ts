import { AgentObservationsIn } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { acceptsBatch, collectRefinements, compileBatchCheck, type Refinement } from "./ingest-batch-check";

const T0 = Date.parse("2026-11-22T23:00:00.000Z");
const hist = (k: number) => [0, 3 * k, 10, 40, 120, 300, 200, 60, 10, 2];

/** One sample with every optional part of the contract present, so mutations reach all of it. */
function sample(s: number) {
  return {
    schemaVersion: 1,
    hostId: "lb-fra-03",
    agentVersion: "0.4.0-rc.1+g3a9",
    kernelRelease: s % 2 ? null : "6.12.48-tide",
    sampledAt: new Date(T0 + s * 1000).toISOString(),
    namespaces: [
      {
        netns: { inode: 4026531840, name: null, root: true },
        pids: [1, 612],
        counters: { TcpExtListenOverflows: 1043 + s, TcpExtListenDrops: 1051 + s, IpFragFails: 0 },
        sockstat: { tcpInuse: 812, tcpOrphan: 0, tcpTw: 2310, tcpAlloc: 950, tcpMemPages: 412 },
        sysctls: {
          somaxconn: 65535,
          tcpMaxSynBacklog: 4096,
          tcpSyncookies: 1,
          tcpRmem: [4096, 131072, 6291456],
          ipLocalPortRange: [32768, 60999],
          tcpMtuProbing: 2,
        },
        listeners: [{ address: "0.0.0.0", port: 443, recvQ: 0, sendQ: 4096, requestedBacklog: 4096 }],
        listenPorts: [{ port: 443, sockets: 1 }],
        established: [{ address: "2001:db8::7", port: 443, count: 310 }],
        establishedTotal: 311,
      },
      {
        netns: { inode: 4026532733, name: "web", root: false },
        pids: [],
        counters: {},
        sockstat: null,
        sysctls: {
          somaxconn: null,
          tcpMaxSynBacklog: null,
          tcpSyncookies: null,
          tcpRmem: null,
          ipLocalPortRange: null,
          tcpMtuProbing: null,
        },
        listeners: [{ address: "*", port: 8080, recvQ: 129, sendQ: 128, requestedBacklog: null }],
        listenPorts: [],
      },
    ],
    cpus: [{ cpu: 0, softnetProcessed: 9e6, softnetDropped: 0, softnetTimeSqueeze: 140, netRxSoftirqs: 5e6 }],
    probes: [
      { probe: "listen_overflow", state: "on", startedAt: "2026-11-22T22:00:00.000Z" },
      { probe: "connect_latency", state: "off", reason: "missing_privilege", detail: "CAP_BPF missing" },
    ],
    probeResults: {
      listenCapped: [
        { netnsInode: 4026532733, port: 8080, pid: 4242, comm: "envoy", requested: 4096, effective: 128 },
      ],
      listenOverflow: [{ netnsInode: 4026532733, port: 8080, drops: 12 + s }],
      connectLatency: [
        {
          netnsInode: 4026532733,
          pid: 4243,
          comm: "php-fpm",
          latencyUs: hist(s),
          eaddrnotavail: 0,
          evenPorts: 25,
          oddPorts: 3,
        },
      ],
      netRxSoftirq: [{ cpu: 0, durationUs: hist(2), intervalMaxUs: 180.5 }],
      icmpFragNeeded: [{ netnsInode: 4026531840, sent: 4 }],
    },
    paths: [
      {
        target: "10.30.0.2",
        method: "tracepath",
        measuredAt: "2026-11-22T22:59:40.000Z",
        localMtu: 1500,
        pmtu: 1400,
        hops: null,
        reached: true,
        blackhole: false,
        evidence: "Resume: pmtu 1400",
      },
    ],
    bcc: {
      tools: [
        { tool: "tcpconnlat", state: "on", reason: null, detail: "/usr/sbin/tcpconnlat-bpfcc" },
        { tool: "softirqs", state: "off", reason: "not_installed", detail: "" },
      ],
      tcpConnectLatency: [{ pid: 4243, comm: "php-fpm", latencyUs: hist(1) }],
      softirqTime: [{ softirq: "net_rx", durationUs: hist(3) }],
    },
  };
}

const counters = (n: number) => Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`c${i}`, n + i]));

function batch() {
  return {
    observations: [sample(0), sample(1), sample(2)],
    dataPlane: [
      {
        component: "director",
        socket: "/run/tide/director.sock",
        reachable: true,
        error: null,
        version: "0.4.0",
        tableHashes: { web: "a".repeat(64) },
        directorCounters: {
          ...Object.fromEntries(
            [
              "rx_packets",
              "rx_bytes",
              "forwarded_packets",
              "forwarded_bytes",
              "forwarded_icmp_pmtu",
              "forwarded_icmp_echo",
              "forwarded_ipv4",
              "forwarded_ipv6",
              "tx_failed",
            ].map((k, i) => [k, 1000 * i]),
          ),
          dropped: { no_bind: 1, malformed: 2, truncated: 3, too_big: 4, unsupported: 5, no_table: 6 },
        },
        redirectCounters: null,
      },
      {
        component: "redirect",
        socket: "/run/tide/redirect.sock",
        reachable: false,
        error: "connect ENOENT",
        version: null,
        tableHashes: {},
        directorCounters: null,
        redirectCounters: Object.fromEntries(
          [
            "total",
            "accepted_syn",
            "accepted_established",
            "accepted_syn_cookie",
            "accepted_last_resort",
            "accepted_udp",
            "accepted_icmp",
            "accepted_pmtu",
            "forwarded_to_self",
            "forwarded_to_alternate",
            "not_gue",
            "dropped_malformed",
            "dropped_truncated",
            "forward_failed",
            "decap_failed",
          ].map((k, i) => [k, i]),
        ),
      },
    ],
    replayed: true,
    dropped: { buffer_full: 0, refused: 1, in_future: 0, too_old: 2, spool_damaged: 0 },
  };
}

/** mulberry32: the same mutations on every run, so a failure can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Path = (string | number)[];

/** Every place in a value (the root excluded). */
function places(value: unknown, path: Path = [], out: Path[] = []): Path[] {
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const p = [...path, Array.isArray(value) ? Number(k) : k];
      out.push(p);
      places(v, p, out);
    }
  }
  return out;
}

/** Values a careless or hostile agent might put anywhere, each a near miss of some rule. */
const REPLACEMENTS: unknown[] = [
  -1,
  0,
  0.5,
  1.5,
  67,
  65536,
  8192,
  2 ** 53,
  1e300,
  -0,
  "",
  "x",
  "x".repeat(16),
  "\u{1F600}".repeat(8), // 8 code points in 16 UTF-16 units: a comm (at most 15) as zod counts
  "\u{1F600}".repeat(16),
  "\uD800x", // a lone surrogate: one code point for both
  "x".repeat(256),
  "a\u0000b",
  "TcpExt",
  "2026-11-22T23:00:00Z",
  "2026-11-22T23:00:00.000+01:00",
  "2026-02-29T00:00:00.000Z",
  "2028-02-29T00:00:00.000Z",
  "1.2",
  "1.2.3-",
  "on",
  "off",
  "director",
  "tracepath",
  "not_installed",
  "a".repeat(64),
  "A".repeat(64),
  null,
  true,
  false,
  [],
  [1, 2],
  [4096, 131072, 6291456, 1],
  {},
  { TcpExtListenOverflows: 1 },
];

function mutate(base: ReturnType<typeof batch>, rnd: () => number): unknown {
  const value = structuredClone(base) as Record<string, unknown>;
  const all = places(value);
  const path = all[Math.floor(rnd() * all.length)]!;
  const parent = path.slice(0, -1).reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], value) as
    Record<string | number, unknown> | unknown[];
  const key = path[path.length - 1]!;
  const kind = rnd();
  if (kind < 0.6)
    (parent as Record<string | number, unknown>)[key] = REPLACEMENTS[Math.floor(rnd() * REPLACEMENTS.length)];
  else if (kind < 0.7) {
    if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else delete parent[key as string];
  } else if (kind < 0.8) {
    const target = (parent as Record<string | number, unknown>)[key];
    if (Array.isArray(target)) target.push(structuredClone(target[0] ?? 1));
    else if (Array.isArray(parent)) parent.push(structuredClone(target));
    else if (target !== null && typeof target === "object") Object.assign(target, counters(1));
    else (parent as Record<string, unknown>)[`${String(key)}Extra`] = target;
  } else if (kind < 0.9) {
    const target = (parent as Record<string | number, unknown>)[key];
    if (Array.isArray(target)) target.reverse();
    else (parent as Record<string | number, unknown>)[key] = typeof target === "number" ? target + 1 : target;
  } else {
    // A key JSON.parse makes an own property but zod never returns
    const target = (parent as Record<string | number, unknown>)[key];
    if (target !== null && typeof target === "object" && !Array.isArray(target))
      (parent as Record<string | number, unknown>)[key] = JSON.parse(
        JSON.stringify(target).replace(
          /^\{/,
          '{"__proto__":{"x":1}' + (Object.keys(target).length ? "," : ""),
        ),
      );
  }
  // What the console gets is JSON text: no undefined, no NaN
  return JSON.parse(JSON.stringify(value)) as unknown;
}

describe("acceptsBatch", () => {
  it("accepts a valid batch, and zod returns that same value for it", () => {
    const b = batch();
    expect(acceptsBatch(b)).toBe(true);
    const parsed = AgentObservationsIn.safeParse(b);
    expect(parsed.error).toBeUndefined();
    expect(parsed.data).toEqual(b);
  });

  it("gives zod's answer for thousands of mutated batches", () => {
    const rnd = random(16);
    const base = batch();
    const disagreements: string[] = [];
    let accepted = 0;
    const N = 2500;
    for (let i = 0; i < N; i++) {
      const m = mutate(base, rnd);
      const zod = AgentObservationsIn.safeParse(m);
      const fast = acceptsBatch(m);
      // The one difference by design: a `__proto__` key, which zod drops from a record, is refused
      const proto = JSON.stringify(m).includes('"__proto__"');
      if (proto ? fast : fast !== zod.success)
        disagreements.push(
          `#${i}: fast ${fast}, zod ${zod.success}: ${JSON.stringify(zod.error?.issues[0] ?? m).slice(0, 300)}`,
        );
      if (zod.success) {
        accepted++;
        // Accepted values are used as given: they must be what zod would have returned
        if (fast) expect(zod.data).toEqual(m);
      }
    }
    expect(disagreements).toEqual([]);
    // Both answers are well represented, or this proves little
    expect(accepted).toBeGreaterThan(N * 0.1);
    expect(accepted).toBeLessThan(N * 0.9);
  }, 60_000);

  it("refuses a record key `__proto__`, which zod would drop from the value it returns", () => {
    const b = JSON.parse(
      JSON.stringify(batch()).replace(
        '"tableHashes":{',
        '"tableHashes":{"__proto__":"' + "b".repeat(64) + '",',
      ),
    ) as unknown;
    const parsed = AgentObservationsIn.safeParse(b);
    expect(parsed.success).toBe(true);
    expect(parsed.data).not.toEqual(b);
    expect(acceptsBatch(b)).toBe(false);
  });

  it.each<[string, (b: ReturnType<typeof batch>) => void]>([
    ["another host's sample", (b) => (b.observations[1]!.hostId = "lb-fra-04")],
    ["samples out of order", (b) => b.observations.reverse()],
    ["two samples at one instant", (b) => (b.observations[1]!.sampledAt = b.observations[0]!.sampledAt)],
    ["a namespace twice", (b) => b.observations[0]!.namespaces.push(b.observations[0]!.namespaces[0]!)],
    ["a fractional counter", (b) => (b.observations[0]!.namespaces[0]!.counters.IpFragFails = 0.5)],
    [
      "a comm of 16 characters",
      (b) => (b.observations[0]!.bcc.tcpConnectLatency[0]!.comm = "\u{1F600}".repeat(16)),
    ],
  ])("refuses %s, as zod does", (_, change) => {
    const b = batch();
    change(b);
    expect(AgentObservationsIn.safeParse(b).success).toBe(false);
    expect(acceptsBatch(b)).toBe(false);
  });
});

describe("collectRefinements", () => {
  const collect = (schema: z.ZodType) => {
    const out: Refinement[] = [];
    collectRefinements(schema, [], out, null);
    return out;
  };

  it("finds the contract's refinements, and leaves the ones JSON Schema states to ajv", () => {
    const found = collect(AgentObservationsIn);
    expect(found.map((r) => r.path.map((s) => (typeof s === "symbol" ? "*" : s)).join("."))).toEqual([
      "observations",
      "observations",
      "observations.*.namespaces",
      "observations.*.namespaces.*.counters",
      "dataPlane.*.tableHashes",
    ]);
  });

  it("runs a refinement wherever it is, and skips absent and null values", () => {
    const even = (n: number) => n % 2 === 0;
    const check = compileBatchCheck(
      z.strictObject({
        a: z.array(z.strictObject({ n: z.number().refine(even).optional() }).nullable()),
        t: z.tuple([z.string(), z.number().refine(even)]),
      }),
    );
    expect(check({ a: [{ n: 2 }, {}, null], t: ["x", 4] })).toBe(true);
    expect(check({ a: [{ n: 2 }, { n: 3 }], t: ["x", 4] })).toBe(false);
    expect(check({ a: [], t: ["x", 5] })).toBe(false);
  });

  it.each<[string, z.ZodType, RegExp]>([
    ["a refinement inside a union", z.union([z.number().refine((n) => n > 0), z.string()]), /inside a union/],
    [
      "a refinement of an optional schema",
      z
        .number()
        .optional()
        .refine((n) => n !== 1),
      /optional/,
    ],
    ["a default", z.strictObject({ a: z.number().default(1) }), /a default schema at a/],
    ["a transform", z.strictObject({ a: z.string().transform((s) => s.length) }), /a pipe schema at a/],
    ["an object that is not strict", z.object({ a: z.number() }), /not strict at \(root\)/],
    ["an object with a catchall", z.strictObject({}).catchall(z.number()), /not strict/],
  ])("refuses to compile %s: it could not give zod's answer", (_, schema, message) => {
    expect(() => compileBatchCheck(schema)).toThrow(message);
  });
});
