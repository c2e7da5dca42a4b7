import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Observation, ObservationBatch, ProbeAvailability, type NamespaceObservation } from "./observations";

/** One sample as tide-agent would send it: a proxy with a root and a container namespace. */
function agentSample(sampledAt = "2026-11-22T23:00:00.000Z") {
  return {
    schemaVersion: 1,
    hostId: "lb-fra-03",
    agentVersion: "0.1.0",
    kernelRelease: "6.12.48-tide",
    sampledAt,
    namespaces: [
      {
        netns: { inode: 4026531840, name: null, root: true },
        pids: [1],
        counters: {
          TcpExtListenOverflows: 1043,
          TcpExtListenDrops: 1051,
          IpFragFails: 0,
          IcmpMsgOutType3: 880,
        },
        sockstat: { tcpInuse: 812, tcpOrphan: 0, tcpTw: 2310, tcpAlloc: 950, tcpMemPages: 412 },
        sysctls: {
          somaxconn: 65535,
          tcpMaxSynBacklog: 4096,
          tcpSyncookies: 1,
          tcpRmem: [4096, 131072, 6291456],
          ipLocalPortRange: [32768, 60999],
          tcpMtuProbing: 0,
        },
        listeners: [{ address: "0.0.0.0", port: 443, recvQ: 0, sendQ: 4096, requestedBacklog: 4096 }],
        listenPorts: [{ port: 443, sockets: 1 }],
        established: [
          { address: "10.40.0.7", port: 443, count: 7200 },
          { address: "2001:db8::7", port: 443, count: 310 },
          { address: "10.40.0.7", port: 41022, count: 1 },
        ],
        establishedTotal: 7540,
      },
      {
        netns: { inode: 4026532733, name: null, root: false },
        pids: [4242, 4250],
        counters: { TcpExtListenOverflows: 0 },
        sockstat: null,
        sysctls: {
          somaxconn: 4096,
          tcpMaxSynBacklog: null,
          tcpSyncookies: null,
          tcpRmem: null,
          ipLocalPortRange: null,
          tcpMtuProbing: null,
        },
        listeners: [],
        listenPorts: [],
      },
    ],
    cpus: [
      {
        cpu: 0,
        softnetProcessed: 9_000_000,
        softnetDropped: 0,
        softnetTimeSqueeze: 140,
        netRxSoftirqs: 5_000_000,
      },
    ],
    probes: [
      { probe: "listen_overflow", state: "on", startedAt: "2026-11-22T22:00:00.000Z" },
      { probe: "connect_latency", state: "off", reason: "missing_privilege", detail: "CAP_BPF missing" },
    ],
    probeResults: {
      listenCapped: [
        { netnsInode: 4026532733, port: 8443, pid: 4242, comm: "envoy", requested: 65535, effective: 4096 },
      ],
      listenOverflow: [{ netnsInode: 4026532733, port: 8443, drops: 12 }],
      connectLatency: [],
      netRxSoftirq: [{ cpu: 0, durationUs: [0, 0, 1000, 80], intervalMaxUs: 1800 }],
      icmpFragNeeded: [],
    },
    paths: [
      {
        target: "10.30.0.2",
        method: "tracepath",
        measuredAt: "2026-11-22T22:59:40.000Z",
        localMtu: 1500,
        pmtu: 1500,
        hops: null,
        reached: true,
        blackhole: true,
        evidence: "Too many hops: pmtu 1500",
      },
    ],
  };
}

/** Paths of object properties without a description in a JSON Schema (root and $defs). */
function undocumented(schema: unknown): string[] {
  const out: string[] = [];
  const walk = (node: unknown, path: string) => {
    if (node === null || typeof node !== "object") return;
    const n = node as Record<string, unknown>;
    const props = n.properties as Record<string, Record<string, unknown>> | undefined;
    for (const [k, v] of Object.entries(props ?? {})) {
      if (typeof v.description !== "string") out.push(`${path}.${k}`);
      walk(v, `${path}.${k}`);
    }
    for (const key of ["items", "additionalProperties"]) walk(n[key], `${path}[]`);
    for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
      for (const x of (n[key] as unknown[] | undefined) ?? []) walk(x, path);
    }
  };
  const root = schema as { $defs?: Record<string, unknown> };
  walk(root, "#");
  for (const [name, def] of Object.entries(root.$defs ?? {})) walk(def, name);
  return out;
}

type Sample = ReturnType<typeof agentSample>;

/** The root namespace of a sample, typed with its optional ESTABLISHED fields. */
const establishedOf = (o: Sample) => o.namespaces[0] as unknown as NamespaceObservation;

describe("Observation", () => {
  it("accepts what the agent sends", () => {
    expect(Observation.parse(agentSample())).toEqual(agentSample());
  });

  it.each<[string, (o: Sample) => void]>([
    ["a negative counter", (o) => (o.namespaces[0]!.counters.TcpExtListenOverflows = -1)],
    ["a fractional counter", (o) => (o.namespaces[0]!.counters.TcpExtListenOverflows = 1.5)],
    [
      "a counter name that is not the kernel's",
      (o) => ((o.namespaces[0]!.counters as Record<string, number>)["Tcp Ext"] = 1),
    ],
    ["a namespace twice", (o) => o.namespaces.push(o.namespaces[0]!)],
    ["no namespace", (o) => (o.namespaces = [])],
    [
      "tcp_rmem with two values",
      (o) => ((o.namespaces[0]!.sysctls as { tcpRmem: unknown }).tcpRmem = [4096, 6291456]),
    ],
    ["syncookies 3", (o) => ((o.namespaces[0]!.sysctls as { tcpSyncookies: unknown }).tcpSyncookies = 3)],
    ["an unknown field", (o) => Object.assign(o, { extra: 1 })],
    ["a comm over 15 bytes", (o) => (o.probeResults.listenCapped[0]!.comm = "envoy-worker-0123")],
    [
      "a histogram of 33 buckets",
      (o) => (o.probeResults.netRxSoftirq[0]!.durationUs = new Array(33).fill(0)),
    ],
    ["a host id with a space", (o) => (o.hostId = "lb fra")],
    ["a local time", (o) => (o.sampledAt = "2026-11-22T23:00:00+01:00")],
    [
      "257 established counts",
      (o) =>
        (establishedOf(o).established = Array.from({ length: 257 }, (_, i) => ({
          address: "10.40.0.7",
          port: i,
          count: 1,
        }))),
    ],
    ["an established port over 65535", (o) => (establishedOf(o).established![0]!.port = 65536)],
    ["a negative established count", (o) => (establishedOf(o).established![0]!.count = -1)],
    ["an empty established address", (o) => (establishedOf(o).established![0]!.address = "")],
    [
      "an unknown field in an established count",
      (o) => Object.assign(establishedOf(o).established![0]!, { peer: "10.1.1.1" }),
    ],
    ["a fractional established total", (o) => (establishedOf(o).establishedTotal = 1.5)],
  ])("rejects %s", (_, mutate) => {
    const o = agentSample();
    mutate(o);
    expect(Observation.safeParse(o).success).toBe(false);
  });

  it("accepts a namespace without established counts (older agents, stored samples)", () => {
    const o = agentSample();
    expect("established" in o.namespaces[1]!).toBe(false);
    expect(Observation.parse(o).namespaces[1]).not.toHaveProperty("established");
    const { established: _e, establishedTotal: _t, ...old } = establishedOf(o);
    expect(Observation.safeParse({ ...o, namespaces: [old, o.namespaces[1]] }).success).toBe(true);
  });

  it("needs a reason for a probe that is off", () => {
    expect(ProbeAvailability.safeParse({ probe: "listen_capped", state: "off" }).success).toBe(false);
    expect(
      ProbeAvailability.safeParse({ probe: "listen_capped", state: "off", reason: "btf_missing", detail: "" })
        .success,
    ).toBe(true);
  });

  it("describes every field (it feeds the API docs)", () => {
    const schema = z.toJSONSchema(ObservationBatch) as { $defs?: Record<string, unknown> };
    expect(Object.keys(schema.$defs ?? {})).toEqual(expect.arrayContaining(["Observation"]));
    expect(undocumented(schema)).toEqual([]);
    // The check itself finds a field without a description.
    expect(undocumented(z.toJSONSchema(z.object({ a: z.object({ b: z.int() }).describe("A") })))).toEqual([
      "#.a.b",
    ]);
  });
});

describe("ObservationBatch", () => {
  it("holds one host's samples in time order", () => {
    const a = agentSample("2026-11-22T23:00:00.000Z");
    const b = agentSample("2026-11-22T23:00:01.000Z");
    expect(ObservationBatch.safeParse({ observations: [a, b] }).success).toBe(true);
    expect(ObservationBatch.safeParse({ observations: [b, a] }).success).toBe(false);
    expect(ObservationBatch.safeParse({ observations: [a, { ...b, hostId: "lb-fra-04" }] }).success).toBe(
      false,
    );
    expect(ObservationBatch.safeParse({ observations: [] }).success).toBe(false);
  });
});
