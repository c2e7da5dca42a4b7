import { readFile } from "node:fs/promises";
import { describe, expect, expectTypeOf, it } from "vitest";
import { DIRECTOR_CONTROL_SCHEMA_FILE, renderDirectorControlSchema } from "../scripts/generate-json-schema";
import {
  DIRECTOR_CONTROL_MAX_LINE_BYTES,
  DIRECTOR_CONTROL_PROTOCOL_VERSION,
  DIRECTOR_CONTROL_SOCKET_PATH,
  DirectorControlReply,
  DirectorControlRequest,
  DirectorCounters,
  DirectorExplainResult,
  DirectorGlbdCode,
  DirectorStatusResult,
  directorControlJsonSchema,
  directorControlReplies,
  type DirectorControlReplyFor,
  type DirectorSetGatewayResult,
} from "./director-control";

const HASH = "0123456789abcdef".repeat(4);

function counters(n = 0) {
  return {
    rx_packets: n,
    rx_bytes: n,
    forwarded_packets: n,
    forwarded_bytes: n,
    forwarded_icmp_pmtu: n,
    forwarded_icmp_echo: n,
    forwarded_ipv4: n,
    forwarded_ipv6: n,
    tx_failed: n,
    dropped: { no_bind: n, malformed: n, truncated: n, too_big: n, unsupported: n, no_table: n },
  };
}

const statusResult = {
  version: "0.1.0",
  pid: 4242,
  started_at: "2025-01-02T03:04:05Z",
  uptime_s: 12.5,
  hash_fields: ["src_addr"],
  alt_hash_fields: [],
  gateway: { mac: "aa:bb:cc:dd:ee:ff", source_ip: "192.0.2.1" },
  mtu: 1500,
  ports: [
    { port_id: 0, name: "0000:01:00.0", mac: "02:00:00:00:00:01", link_up: true, rx_queues: 2, tx_queues: 2 },
  ],
  lcores: [{ lcore_id: 1, port_id: 0, rx_queue: 0, tx_queue: 0 }],
  table: {
    path: "/var/lib/tide/table.glbd",
    generation: 3,
    loaded_at: "2025-01-02T03:05:00.123Z",
    load_ms: 4.2,
  },
  pools: [
    {
      index: 0,
      name: "web",
      content_hash: HASH,
      // The pool's own fields (a v3 file), unlike the configured default above.
      hash_fields: ["src_addr", "src_port"],
      alt_hash_fields: ["src_addr"],
      loaded_at: "2025-01-02T03:05:00.123Z",
      backends: [
        { slot: 0, address: "10.0.0.1", state: "active", healthy: true },
        { slot: 1, address: "10.0.0.2", state: "draining", healthy: false },
        { slot: 2, address: "10.0.0.3", state: "filling", healthy: true },
        { slot: 3, address: "10.0.0.4", state: "inactive", healthy: true },
      ],
      binds: [
        { address: "198.51.100.10", prefix_bits: 32, proto: "tcp", port_start: 80, port_end: 443 },
        { address: "2001:db8::", prefix_bits: 64, proto: "udp", port_start: 0, port_end: 65535 },
      ],
    },
  ],
};

const explainResult = {
  pool: "web",
  pool_index: 0,
  row: 513,
  digest: "00f1e2d3c4b5a697",
  primary: "10.0.0.1",
  secondary: "10.0.0.2",
  hops: ["10.0.0.2"],
  outer_source_port: 0x8123,
  alt: null,
  hash_fields: ["src_addr", "src_port"],
  alt_hash_fields: [],
};

describe("director control constants", () => {
  it("fix the protocol version, socket path and line limit", () => {
    expect(DIRECTOR_CONTROL_PROTOCOL_VERSION).toBe(1);
    expect(DIRECTOR_CONTROL_SOCKET_PATH).toBe("/run/tide/director.sock");
    expect(DIRECTOR_CONTROL_MAX_LINE_BYTES).toBe(65536);
  });
});

describe("DirectorControlRequest", () => {
  it.each([
    { cmd: "status" },
    { id: 1, cmd: "status" },
    { id: "req-7", cmd: "stats" },
    { cmd: "load_table", path: "/var/lib/tide/table.glbd" },
    { id: 2, cmd: "load_table", path: "/var/lib/tide/table.glbd", pool_names: ["web", "dns"] },
    { cmd: "explain", src_addr: "203.0.113.9", dst_addr: "198.51.100.10", protocol: "tcp" },
    {
      cmd: "explain",
      src_addr: "2001:db8::9",
      dst_addr: "2001:db8::10",
      protocol: "udp",
      src_port: 0,
      dst_port: 65535,
    },
    { cmd: "explain", src_addr: "203.0.113.9", dst_addr: "198.51.100.10", protocol: "icmp" },
    { cmd: "set_gateway", mac: "aa:bb:cc:dd:ee:ff", source_ip: "192.0.2.1" },
    { cmd: "set_gateway", mac: "AA:BB:CC:00:11:22", source_ip: "192.0.2.1" },
  ])("accepts %j", (line) => {
    expect(DirectorControlRequest.parse(line)).toEqual(line);
  });

  it("leaves explain's omitted ports absent (the director reads them as 0)", () => {
    const r = DirectorControlRequest.parse({
      cmd: "explain",
      src_addr: "203.0.113.9",
      dst_addr: "198.51.100.10",
      protocol: "tcp",
    });
    expect(r).not.toHaveProperty("src_port");
    expect(r).not.toHaveProperty("dst_port");
  });

  it.each<[string, unknown]>([
    ["an unknown command", { cmd: "reload" }],
    ["a missing cmd", { id: 1 }],
    ["a non-object", ["status"]],
    ["an unknown field on status", { cmd: "status", verbose: true }],
    ["an unknown field on load_table", { cmd: "load_table", path: "/t.glbd", force: true }],
    [
      "a camelCase field",
      { cmd: "explain", srcAddr: "203.0.113.9", dst_addr: "198.51.100.10", protocol: "tcp" },
    ],
    ["a missing path", { cmd: "load_table" }],
    ["a numeric path", { cmd: "load_table", path: 1 }],
    ["pool_names as a string", { cmd: "load_table", path: "/t.glbd", pool_names: "web" }],
    ["a fractional id", { id: 1.5, cmd: "status" }],
    ["a null id", { id: null, cmd: "status" }],
    ["an object id", { id: { n: 1 }, cmd: "status" }],
    [
      "port 70000",
      {
        cmd: "explain",
        src_addr: "203.0.113.9",
        dst_addr: "198.51.100.10",
        protocol: "tcp",
        dst_port: 70000,
      },
    ],
    [
      "port -1",
      { cmd: "explain", src_addr: "203.0.113.9", dst_addr: "198.51.100.10", protocol: "tcp", src_port: -1 },
    ],
    [
      "port 80.5",
      { cmd: "explain", src_addr: "203.0.113.9", dst_addr: "198.51.100.10", protocol: "tcp", src_port: 80.5 },
    ],
    [
      "a port as a string",
      { cmd: "explain", src_addr: "203.0.113.9", dst_addr: "198.51.100.10", protocol: "tcp", src_port: "80" },
    ],
    [
      "an unknown protocol",
      { cmd: "explain", src_addr: "203.0.113.9", dst_addr: "198.51.100.10", protocol: "sctp" },
    ],
    [
      "a host name as address",
      { cmd: "explain", src_addr: "client.example", dst_addr: "198.51.100.10", protocol: "tcp" },
    ],
    [
      "an IPv4 address out of range",
      { cmd: "explain", src_addr: "203.0.113.256", dst_addr: "198.51.100.10", protocol: "tcp" },
    ],
    [
      "a CIDR as address",
      { cmd: "explain", src_addr: "203.0.113.0/24", dst_addr: "198.51.100.10", protocol: "tcp" },
    ],
    ["a MAC with five octets", { cmd: "set_gateway", mac: "aa:bb:cc:dd:ee", source_ip: "192.0.2.1" }],
    ["a MAC with dashes", { cmd: "set_gateway", mac: "aa-bb-cc-dd-ee-ff", source_ip: "192.0.2.1" }],
    ["a MAC with a non-hex digit", { cmd: "set_gateway", mac: "aa:bb:cc:dd:ee:fg", source_ip: "192.0.2.1" }],
    ["a MAC without separators", { cmd: "set_gateway", mac: "aabbccddeeff", source_ip: "192.0.2.1" }],
    ["an IPv6 gateway source", { cmd: "set_gateway", mac: "aa:bb:cc:dd:ee:ff", source_ip: "2001:db8::1" }],
    ["a missing source_ip", { cmd: "set_gateway", mac: "aa:bb:cc:dd:ee:ff" }],
  ])("rejects %s", (_what, line) => {
    expect(DirectorControlRequest.safeParse(line).success).toBe(false);
  });
});

describe("DirectorControlReply", () => {
  it.each([
    { id: 1, ok: true, result: statusResult },
    {
      id: null,
      ok: true,
      result: { ...statusResult, table: null, pools: [], alt_hash_fields: ["dst_addr"] },
    },
    {
      id: "a",
      ok: true,
      result: {
        generation: 1,
        load_ms: 3,
        pools: [{ index: 0, name: "0", content_hash: HASH, hash_fields: ["dst_port"], alt_hash_fields: [] }],
      },
    },
    { id: 2, ok: true, result: { totals: counters(7), ports: [], lcores: [] } },
    { id: 3, ok: true, result: explainResult },
    { id: 4, ok: true, result: { mac: "aa:bb:cc:dd:ee:ff", source_ip: "192.0.2.1" } },
    { id: 5, ok: false, error: { code: "unknown_command", message: 'unknown command "reload"' } },
    { id: null, ok: false, error: { code: "bad_request", message: "not JSON", detail: { column: 3 } } },
    {
      id: 6,
      ok: false,
      error: {
        code: "invalid_table",
        message: "backend 3 is IPv6",
        detail: { glbd_code: "ipv6_backend", table: 0, slot: 3, row: null, offset: 1234 },
      },
    },
  ])("accepts %j", (line) => {
    expect(DirectorControlReply.parse(line)).toEqual(line);
  });

  it("accepts stats with per-port and per-lcore counters", () => {
    const stats = {
      totals: counters(10),
      ports: [
        {
          port_id: 0,
          rx_packets: 10,
          rx_bytes: 1000,
          tx_packets: 9,
          tx_bytes: 1200,
          rx_missed: 0,
          rx_errors: 0,
          tx_errors: 1,
        },
      ],
      lcores: [{ lcore_id: 1, port_id: 0, rx_queue: 0, counters: counters(10) }],
    };
    expect(directorControlReplies.stats.parse({ id: 1, ok: true, result: stats })).toEqual({
      id: 1,
      ok: true,
      result: stats,
    });
  });

  it("takes u64 counters past 2^53 but not negative or fractional ones", () => {
    expect(DirectorCounters.safeParse(counters(2 ** 60)).success).toBe(true);
    expect(DirectorCounters.safeParse(counters(-1)).success).toBe(false);
    expect(DirectorCounters.safeParse(counters(0.5)).success).toBe(false);
    expect(
      DirectorCounters.safeParse({ ...counters(), dropped: { ...counters().dropped, other: 1 } }).success,
    ).toBe(false);
  });

  it.each<[string, unknown]>([
    ["a missing id", { ok: true, result: { mac: "aa:bb:cc:dd:ee:ff", source_ip: "192.0.2.1" } }],
    ["ok true with an error", { id: 1, ok: true, error: { code: "internal", message: "x" } }],
    [
      "ok false with a result",
      { id: 1, ok: false, result: { mac: "aa:bb:cc:dd:ee:ff", source_ip: "192.0.2.1" } },
    ],
    ["an unknown error code", { id: 1, ok: false, error: { code: "nope", message: "x" } }],
    ["invalid_table without detail", { id: 1, ok: false, error: { code: "invalid_table", message: "x" } }],
    [
      "an unknown GLBD code",
      {
        id: 1,
        ok: false,
        error: {
          code: "invalid_table",
          message: "x",
          detail: { glbd_code: "bad_mood", table: null, slot: null, row: null, offset: null },
        },
      },
    ],
    [
      "invalid_table detail with a field left out",
      {
        id: 1,
        ok: false,
        error: { code: "invalid_table", message: "x", detail: { glbd_code: "bad_magic" } },
      },
    ],
    ["an unknown field in a result", { id: 1, ok: true, result: { ...explainResult, extra: 1 } }],
    ["a result of no command", { id: 1, ok: true, result: { hello: "world" } }],
    [
      "an unknown top-level field",
      { id: 1, ok: true, result: { mac: "aa:bb:cc:dd:ee:ff", source_ip: "192.0.2.1" }, ms: 1 },
    ],
  ])("rejects %s", (_what, line) => {
    expect(DirectorControlReply.safeParse(line).success).toBe(false);
  });

  it("types and checks a command's own result", () => {
    const reply = { id: 1, ok: true, result: { mac: "aa:bb:cc:dd:ee:ff", source_ip: "192.0.2.1" } };
    const parsed = directorControlReplies.set_gateway.parse(reply);
    expect(parsed).toEqual(reply);
    expectTypeOf(parsed).toEqualTypeOf<DirectorControlReplyFor<"set_gateway">>();
    expect(directorControlReplies.status.safeParse(reply).success).toBe(false);
    expectTypeOf<
      Extract<DirectorControlReplyFor<"set_gateway">, { ok: true }>["result"]
    >().toEqualTypeOf<DirectorSetGatewayResult>();
  });
});

describe("DirectorStatusResult", () => {
  const pool = statusResult.pools[0]!;
  const withBind = (bind: object) => ({ ...statusResult, pools: [{ ...pool, binds: [bind] }] });
  const withPool = (changes: object) => ({ ...statusResult, pools: [{ ...pool, ...changes }] });

  it.each<[string, unknown]>([
    ["an upper-case content hash", withPool({ content_hash: HASH.toUpperCase() })],
    ["a short content hash", withPool({ content_hash: HASH.slice(1) })],
    [
      "an unknown backend state",
      withPool({ backends: [{ slot: 0, address: "10.0.0.1", state: "removed", healthy: true }] }),
    ],
    ["a pool without its hash fields", withPool({ hash_fields: undefined })],
    ["a pool with no hash fields", withPool({ hash_fields: [] })],
    ["a pool with an unknown alt hash field", withPool({ alt_hash_fields: ["dst_mac"] })],
    [
      "an IPv6 backend",
      withPool({ backends: [{ slot: 0, address: "2001:db8::1", state: "active", healthy: true }] }),
    ],
    [
      "a bind port past 65535",
      withBind({ address: "198.51.100.10", prefix_bits: 32, proto: "tcp", port_start: 0, port_end: 70000 }),
    ],
    [
      "a reversed port range",
      withBind({ address: "198.51.100.10", prefix_bits: 32, proto: "tcp", port_start: 443, port_end: 80 }),
    ],
    [
      "an IPv4 prefix of 33 bits",
      withBind({ address: "198.51.100.10", prefix_bits: 33, proto: "tcp", port_start: 0, port_end: 0 }),
    ],
    [
      "an icmp bind",
      withBind({ address: "198.51.100.10", prefix_bits: 32, proto: "icmp", port_start: 0, port_end: 0 }),
    ],
    [
      "a gateway MAC with a non-hex digit",
      { ...statusResult, gateway: { mac: "zz:bb:cc:dd:ee:ff", source_ip: "192.0.2.1" } },
    ],
    ["a local-time start", { ...statusResult, started_at: "2025-01-02T03:04:05+02:00" }],
    ["no hash fields", { ...statusResult, hash_fields: [] }],
    ["an unknown hash field", { ...statusResult, hash_fields: ["proto"] }],
    ["generation 0", { ...statusResult, table: { ...statusResult.table, generation: 0 } }],
    ["a version that is not semver", { ...statusResult, version: "latest" }],
  ])("rejects %s", (_what, result) => {
    expect(DirectorStatusResult.safeParse(result).success).toBe(false);
  });
});

describe("DirectorExplainResult", () => {
  it("accepts the alt pair as hops 2 and 3 while hash fields migrate", () => {
    const migrating = {
      ...explainResult,
      alt_hash_fields: ["src_addr"],
      hops: ["10.0.0.2", "10.0.0.3", "10.0.0.1"],
      alt: { row: 7, primary: "10.0.0.3", secondary: "10.0.0.1" },
    };
    expect(DirectorExplainResult.parse(migrating)).toEqual(migrating);
  });

  it.each<[string, unknown]>([
    ["an upper-case digest", { ...explainResult, digest: "00F1E2D3C4B5A697" }],
    ["a 15-digit digest", { ...explainResult, digest: "0f1e2d3c4b5a697" }],
    ["a row past 65535", { ...explainResult, row: 65536 }],
    ["an outer source port without the top bit", { ...explainResult, outer_source_port: 0x7fff }],
    ["three hops without alt", { ...explainResult, hops: ["10.0.0.2", "10.0.0.3", "10.0.0.1"] }],
    ["one hop with alt", { ...explainResult, alt: { row: 7, primary: "10.0.0.3", secondary: "10.0.0.1" } }],
    ["no hops", { ...explainResult, hops: [] }],
    ["a missing alt", { ...explainResult, alt: undefined }],
    ["alt_hash_fields without alt", { ...explainResult, alt_hash_fields: ["src_addr"] }],
    ["no hash_fields", { ...explainResult, hash_fields: undefined }],
  ])("rejects %s", (_what, result) => {
    expect(DirectorExplainResult.safeParse(result).success).toBe(false);
  });
});

describe("DirectorGlbdCode", () => {
  it("holds the codec's codes and the director's own", () => {
    expect(DirectorGlbdCode.options).toHaveLength(25);
    for (const code of [
      "bad_magic",
      "bad_hash_key",
      "bad_hash_fields",
      "bad_alt_hash_fields",
      "ipv6_backend",
      "bind_overlap",
      "pool_names",
    ]) {
      expect(DirectorGlbdCode.options).toContain(code);
    }
  });
});

describe("director-control.schema.json", () => {
  it("is what `npm run schemas` generates (regenerate it after changing the zod schemas)", async () => {
    const committed = await readFile(DIRECTOR_CONTROL_SCHEMA_FILE, "utf8");
    expect(committed).toBe(await renderDirectorControlSchema());
  });

  it("has $defs for the request, the reply and each result", () => {
    const schema = directorControlJsonSchema();
    expect(Object.keys(schema.$defs ?? {})).toEqual(
      expect.arrayContaining([
        "DirectorControlRequest",
        "DirectorControlReply",
        "DirectorStatusResult",
        "DirectorLoadTableResult",
        "DirectorStatsResult",
        "DirectorExplainResult",
        "DirectorSetGatewayResult",
      ]),
    );
  });

  it("describes every field and closes every object", () => {
    const undescribed: string[] = [];
    const open: string[] = [];
    const visit = (node: unknown, path: string): void => {
      if (Array.isArray(node)) {
        node.forEach((n, i) => visit(n, `${path}/${i}`));
        return;
      }
      if (typeof node !== "object" || node === null) return;
      const obj = node as Record<string, unknown>;
      if (obj.type === "object" && obj.properties !== undefined && obj.additionalProperties !== false) {
        open.push(path);
      }
      if (obj.properties !== undefined) {
        for (const [name, prop] of Object.entries(
          obj.properties as Record<string, { description?: string }>,
        )) {
          if (typeof prop.description !== "string" || prop.description === "")
            undescribed.push(`${path}/${name}`);
        }
      }
      for (const [key, child] of Object.entries(obj)) visit(child, `${path}/${key}`);
    };
    visit(directorControlJsonSchema(), "#");
    expect(undescribed).toEqual([]);
    expect(open).toEqual([]);
  });
});
