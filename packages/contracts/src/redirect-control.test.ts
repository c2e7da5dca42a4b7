import { readFile } from "node:fs/promises";
import { describe, expect, expectTypeOf, it } from "vitest";
import { REDIRECT_CONTROL_SCHEMA_FILE, renderRedirectControlSchema } from "../scripts/generate-json-schema";
import {
  REDIRECT_CONTROL_MAX_LINE_BYTES,
  REDIRECT_CONTROL_PROTOCOL_VERSION,
  REDIRECT_CONTROL_SOCKET_PATH,
  REDIRECT_DEFAULT_GUE_PORT,
  REDIRECT_FLOWS_DEFAULT_SINCE_MS,
  REDIRECT_FLOWS_MAX_SINCE_MS,
  REDIRECT_MAX_FLOWS,
  REDIRECT_MAX_FLOWS_REPLY,
  REDIRECT_MAX_LOCAL_ADDRESSES,
  REDIRECT_MAX_VIPS,
  RedirectControlReply,
  RedirectControlRequest,
  RedirectCounters,
  RedirectFlow,
  RedirectFlowsResult,
  RedirectStatsResult,
  RedirectStatusResult,
  RedirectVip,
  redirectControlJsonSchema,
  redirectControlReplies,
  type RedirectConfigResult,
  type RedirectControlReplyFor,
  type RedirectFlowsResult as RedirectFlowsResultType,
} from "./redirect-control";

function counters(n = 0) {
  return {
    total: n,
    accepted_syn: n,
    accepted_established: n,
    accepted_syn_cookie: n,
    accepted_last_resort: n,
    accepted_udp: n,
    accepted_icmp: n,
    accepted_pmtu: n,
    forwarded_to_self: n,
    forwarded_to_alternate: n,
    not_gue: n,
    dropped_malformed: n,
    dropped_truncated: n,
    forward_failed: n,
    decap_failed: n,
  };
}

/** Replies as tide-redirect printed them (dataplane/redirect, captured from a run). */
const daemonStatus =
  '{"id":1,"ok":true,"result":{"version":"0.1.0","pid":20822,"started_at":"2026-11-22T23:15:47.966Z",' +
  '"uptime_s":1.676544903,"iface":"s0","ifindex":3,"netns":"trsmoke","attach":"tc-ingress","prog_id":7,' +
  '"port":19523,"local_addresses":["10.9.0.1"]}}';
const daemonStats =
  '{"id":null,"ok":true,"result":{"counters":{"total":0,"accepted_syn":0,"accepted_established":0,' +
  '"accepted_syn_cookie":0,"accepted_last_resort":0,"accepted_udp":0,"accepted_icmp":0,"accepted_pmtu":0,' +
  '"forwarded_to_self":0,"forwarded_to_alternate":0,"not_gue":4,"dropped_malformed":0,' +
  '"dropped_truncated":0,"forward_failed":0,"decap_failed":0}}}';
/** The same from a tide-redirect with the why counters and the VIP map (captured from a run). */
const daemonStatsWithVips =
  '{"id":null,"ok":true,"result":{"counters":{"total":0,"accepted_syn":0,"accepted_established":0,' +
  '"accepted_syn_cookie":0,"accepted_last_resort":0,"accepted_udp":0,"accepted_icmp":0,"accepted_pmtu":0,' +
  '"forwarded_to_self":0,"forwarded_to_alternate":0,"not_gue":2,"dropped_malformed":0,' +
  '"dropped_truncated":0,"forward_failed":0,"decap_failed":0,"accepted_second_chance":0,' +
  '"accepted_alternate_hash":0},"vips":[]}}';

const vipCounters = (n = 0) => ({
  forwarded_to_alternate: n,
  accepted_second_chance: n,
  accepted_alternate_hash: n,
  accepted_last_resort: n,
  accepted_established: n,
  accepted_syn: n,
});
const vip = { address: "10.201.0.10", port: 80, proto: "tcp", counters: vipCounters(3) };

/** A flows reply as tide-redirect printed it (dataplane/tests/redirect/e2e.c, captured from a run). */
const daemonFlows =
  '{"id":5,"ok":true,"result":{"flows":[{"client_address":"10.202.0.5","client_port":45000,' +
  '"address":"10.201.0.10","port":8080,"proto":"tcp","first_seen_ms_ago":100,"second_chance":null,' +
  '"alternate_hash":null,"last_resort":{"packets":1,"last_seen_ms_ago":100}},' +
  '{"client_address":"10.202.0.5","client_port":56278,"address":"10.201.0.10","port":8080,' +
  '"proto":"tcp","first_seen_ms_ago":1621,"second_chance":{"packets":4,"last_seen_ms_ago":121},' +
  '"alternate_hash":{"packets":1,"last_seen_ms_ago":1621},"last_resort":null}],"matched":2,' +
  '"capacity":8192}}';

const daemonConfig =
  '{"id":null,"ok":true,"result":{"port":19524,"local_addresses":["10.9.0.1","10.9.0.7"]}}';
const daemonError =
  '{"id":null,"ok":false,"error":{"code":"unknown_command","message":"unknown command \\"nope\\" (status, stats, config)"}}';

const statusResult = {
  version: "0.1.0",
  pid: 4242,
  started_at: "2025-01-02T03:04:05.000Z",
  uptime_s: 12.5,
  iface: "eth0",
  ifindex: 2,
  netns: null,
  attach: "tc-ingress",
  prog_id: 31,
  port: 19523,
  local_addresses: ["10.0.0.1", "10.0.0.2"],
};

describe("redirect control constants", () => {
  it("fix the protocol version, socket path, line limit, address limit and port", () => {
    expect(REDIRECT_CONTROL_PROTOCOL_VERSION).toBe(1);
    expect(REDIRECT_CONTROL_SOCKET_PATH).toBe("/run/tide/redirect.sock");
    expect(REDIRECT_CONTROL_MAX_LINE_BYTES).toBe(65536);
    expect(REDIRECT_MAX_LOCAL_ADDRESSES).toBe(16);
    expect(REDIRECT_DEFAULT_GUE_PORT).toBe(19523);
  });
});

describe("RedirectControlRequest", () => {
  it.each([
    { cmd: "status" },
    { id: 1, cmd: "status" },
    { id: "s", cmd: "stats" },
    { cmd: "config" },
    { cmd: "config", port: 19524 },
    { id: 3, cmd: "config", local_addresses: ["10.0.0.1"] },
    { cmd: "config", local_addresses: ["10.0.0.1", "10.0.0.2"], port: 1 },
    { cmd: "flows" },
    { id: 7, cmd: "flows", since_ms: 1 },
    { cmd: "flows", since_ms: REDIRECT_FLOWS_MAX_SINCE_MS },
  ])("accepts %j", (line) => {
    expect(RedirectControlRequest.parse(line)).toEqual(line);
  });

  it.each<[string, unknown]>([
    ["an unknown command", { cmd: "reload" }],
    ["a missing cmd", { id: 1 }],
    ["an unknown field on status", { cmd: "status", verbose: true }],
    ["an unknown field on stats", { cmd: "stats", reset: true }],
    ["an unknown field on config", { cmd: "config", mtu: 1500 }],
    ["port 0", { cmd: "config", port: 0 }],
    ["port 65536", { cmd: "config", port: 65536 }],
    ["a fractional port", { cmd: "config", port: 19523.5 }],
    ["a port as a string", { cmd: "config", port: "19523" }],
    ["no local addresses", { cmd: "config", local_addresses: [] }],
    [
      "17 local addresses",
      { cmd: "config", local_addresses: Array.from({ length: 17 }, (_, i) => `10.0.0.${i}`) },
    ],
    ["a repeated local address", { cmd: "config", local_addresses: ["10.0.0.1", "10.0.0.1"] }],
    ["an IPv6 local address", { cmd: "config", local_addresses: ["2001:db8::1"] }],
    ["a local address as a string", { cmd: "config", local_addresses: "10.0.0.1" }],
    ["since_ms 0", { cmd: "flows", since_ms: 0 }],
    ["since_ms over ten minutes", { cmd: "flows", since_ms: REDIRECT_FLOWS_MAX_SINCE_MS + 1 }],
    ["a fractional since_ms", { cmd: "flows", since_ms: 1.5 }],
    ["since_ms as a string", { cmd: "flows", since_ms: "x" }],
    ["a null since_ms", { cmd: "flows", since_ms: null }],
    ["an unknown field on flows", { cmd: "flows", limit: 10 }],
    ["a null id", { id: null, cmd: "status" }],
    ["a fractional id", { id: 1.5, cmd: "status" }],
  ])("rejects %s", (_what, line) => {
    expect(RedirectControlRequest.safeParse(line).success).toBe(false);
  });
});

describe("RedirectControlReply", () => {
  it.each([daemonStatus, daemonStats, daemonStatsWithVips, daemonConfig, daemonFlows, daemonError])(
    "accepts the daemon's own line %s",
    (line) => {
      const parsed: unknown = JSON.parse(line);
      expect(RedirectControlReply.parse(parsed)).toEqual(parsed);
    },
  );

  it.each([
    { id: 1, ok: true, result: statusResult },
    { id: 2, ok: true, result: { ...statusResult, netns: "proxy1" } },
    { id: "x", ok: true, result: { counters: counters(5) } },
    { id: null, ok: true, result: { port: 19523, local_addresses: ["192.0.2.1"] } },
    {
      id: null,
      ok: false,
      error: { code: "line_too_long", message: "request line longer than 65536 bytes" },
    },
    { id: 4, ok: false, error: { code: "bad_request", message: '"port" must be an integer 1..65535' } },
  ])("accepts %j", (line) => {
    expect(RedirectControlReply.parse(line)).toEqual(line);
  });

  it("takes u64 counters past 2^53 but not negative, fractional or unknown ones", () => {
    expect(RedirectCounters.safeParse(counters(2 ** 60)).success).toBe(true);
    expect(RedirectCounters.safeParse(counters(-1)).success).toBe(false);
    expect(RedirectCounters.safeParse(counters(0.5)).success).toBe(false);
    expect(RedirectCounters.safeParse({ ...counters(), dropped_other: 0 }).success).toBe(false);
    const { decap_failed: _omitted, ...missing } = counters();
    expect(RedirectCounters.safeParse(missing).success).toBe(false);
  });

  it.each<[string, unknown]>([
    [
      "an error code of the director only",
      { id: 1, ok: false, error: { code: "invalid_table", message: "x" } },
    ],
    ["an error with detail", { id: 1, ok: false, error: { code: "internal", message: "x", detail: {} } }],
    ["ok true with an error", { id: 1, ok: true, error: { code: "internal", message: "x" } }],
    ["a missing id", { ok: true, result: { port: 19523, local_addresses: ["10.0.0.1"] } }],
    ["an unknown field in a result", { id: 1, ok: true, result: { ...statusResult, mtu: 1500 } }],
    ["another attach point", { id: 1, ok: true, result: { ...statusResult, attach: "xdp" } }],
    ["an empty netns name", { id: 1, ok: true, result: { ...statusResult, netns: "" } }],
    ["prog_id 0", { id: 1, ok: true, result: { ...statusResult, prog_id: 0 } }],
    ["a result of no command", { id: 1, ok: true, result: { hello: "world" } }],
  ])("rejects %s", (_what, line) => {
    expect(RedirectControlReply.safeParse(line).success).toBe(false);
  });

  it("types and checks a command's own result", () => {
    const reply = { id: 1, ok: true, result: { port: 19523, local_addresses: ["10.0.0.1"] } };
    const parsed = redirectControlReplies.config.parse(reply);
    expect(parsed).toEqual(reply);
    expectTypeOf(parsed).toEqualTypeOf<RedirectControlReplyFor<"config">>();
    expect(redirectControlReplies.status.safeParse(reply).success).toBe(false);
    expectTypeOf<
      Extract<RedirectControlReplyFor<"config">, { ok: true }>["result"]
    >().toEqualTypeOf<RedirectConfigResult>();
  });
});

describe("RedirectStatsResult: the why counters and the VIPs", () => {
  it("takes a reply of an older tide-redirect: no why counters, no vips", () => {
    const parsed = redirectControlReplies.stats.parse(JSON.parse(daemonStats));
    expect(parsed.ok && parsed.result.vips).toBeUndefined();
    expect(parsed.ok && parsed.result.counters.accepted_second_chance).toBeUndefined();
  });

  it("takes the why counters and VIPs (IPv4 and IPv6, tcp and udp)", () => {
    const result = {
      counters: { ...counters(9), accepted_second_chance: 2, accepted_alternate_hash: 1 },
      vips: [vip, { ...vip, address: "fd00:201::10", proto: "udp", port: 0 }],
    };
    expect(RedirectStatsResult.parse(result)).toEqual(result);
  });

  it.each<[string, unknown]>([
    ["a port over 65535", { ...vip, port: 65536 }],
    ["another protocol", { ...vip, proto: "sctp" }],
    ["a host name", { ...vip, address: "vip.example" }],
    ["a missing VIP counter", { ...vip, counters: { ...vipCounters(), accepted_syn: undefined } }],
    ["an unknown VIP counter", { ...vip, counters: { ...vipCounters(), accepted_udp: 0 } }],
    ["a negative VIP counter", { ...vip, counters: vipCounters(-1) }],
  ])("rejects a VIP with %s", (_what, v) => {
    expect(RedirectVip.safeParse(v).success).toBe(false);
  });

  it(`takes at most ${REDIRECT_MAX_VIPS} VIPs (the BPF map's size)`, () => {
    const many = (n: number) => ({ counters: counters(), vips: Array.from({ length: n }, () => vip) });
    expect(RedirectStatsResult.safeParse(many(REDIRECT_MAX_VIPS)).success).toBe(true);
    expect(RedirectStatsResult.safeParse(many(REDIRECT_MAX_VIPS + 1)).success).toBe(false);
  });

  it("names the VIP counters as the C X-macro does, in its order", async () => {
    const structs = await readFile(
      new URL("../../../dataplane/redirect/tide_redirect_structs.h", import.meta.url),
      "utf8",
    );
    const macro = (name: string) =>
      [
        ...(structs.split(`#define ${name}(X)`)[1]?.split(/\n\s*\n/)[0] ?? "").matchAll(/X\(\w+, (\w+)\)/g),
      ].map((m) => m[1]);
    expect(macro("TIDE_REDIRECT_VIP_COUNTERS")).toEqual(Object.keys(vipCounters()));
    expect(macro("TIDE_REDIRECT_COUNTERS")).toEqual(Object.keys(RedirectCounters.shape));
  });
});

describe("RedirectFlowsResult: the flows of the change report", () => {
  const flow = {
    client_address: "10.0.0.5",
    client_port: 40000,
    address: "10.77.0.1",
    port: 8080,
    proto: "tcp",
    first_seen_ms_ago: 1234,
    second_chance: { packets: 12, last_seen_ms_ago: 3 },
    alternate_hash: null,
    last_resort: null,
  };

  it("fixes the map size, the reply cap and the default window", () => {
    expect(REDIRECT_MAX_FLOWS).toBe(8192);
    expect(REDIRECT_MAX_FLOWS_REPLY).toBe(512);
    expect(REDIRECT_FLOWS_DEFAULT_SINCE_MS).toBe(10_000);
    expect(REDIRECT_FLOWS_MAX_SINCE_MS).toBe(600_000);
  });

  it("takes a reply with flows of every kind, IPv4 and IPv6", () => {
    const result = {
      flows: [
        flow,
        {
          ...flow,
          client_address: "fd00::5",
          address: "fd00:77::1",
          second_chance: { packets: 2 ** 60, last_seen_ms_ago: 0.25 },
          alternate_hash: { packets: 1, last_seen_ms_ago: 0 },
          last_resort: { packets: 3, last_seen_ms_ago: 9000 },
        },
      ],
      matched: 37,
      capacity: REDIRECT_MAX_FLOWS,
    };
    const reply = { id: 1, ok: true, result };
    const parsed = redirectControlReplies.flows.parse(reply);
    expect(parsed).toEqual(reply);
    expectTypeOf(parsed).toEqualTypeOf<RedirectControlReplyFor<"flows">>();
    expect(RedirectControlReply.parse(reply)).toEqual(reply);
    expectTypeOf<
      Extract<RedirectControlReplyFor<"flows">, { ok: true }>["result"]
    >().toEqualTypeOf<RedirectFlowsResultType>();
  });

  it("takes an empty list", () => {
    expect(RedirectFlowsResult.safeParse({ flows: [], matched: 0, capacity: 8192 }).success).toBe(true);
  });

  it.each<[string, unknown]>([
    ["udp", { ...flow, proto: "udp" }],
    ["a missing kind (null is the way to say never)", { ...flow, last_resort: undefined }],
    ["a kind without last_seen_ms_ago", { ...flow, last_resort: { packets: 1 } }],
    ["a negative age", { ...flow, second_chance: { packets: 1, last_seen_ms_ago: -1 } }],
    ["a negative first_seen_ms_ago", { ...flow, first_seen_ms_ago: -1 }],
    ["fractional packets", { ...flow, second_chance: { packets: 0.5, last_seen_ms_ago: 1 } }],
    ["an unknown field in a kind", { ...flow, second_chance: { packets: 1, last_seen_ms_ago: 1, x: 1 } }],
    ["an unknown kind", { ...flow, forwarded: null }],
    ["a client port over 65535", { ...flow, client_port: 65536 }],
    ["a host name", { ...flow, address: "vip.example" }],
  ])("rejects a flow with %s", (_what, f) => {
    expect(RedirectFlow.safeParse(f).success).toBe(false);
  });

  it.each<[string, unknown]>([
    ["a missing matched", { flows: [], capacity: 8192 }],
    ["a negative matched", { flows: [], matched: -1, capacity: 8192 }],
    ["capacity 0", { flows: [], matched: 0, capacity: 0 }],
    ["an unknown field", { flows: [], matched: 0, capacity: 8192, evicted: 0 }],
    [
      `more than ${REDIRECT_MAX_FLOWS_REPLY} flows`,
      {
        flows: Array.from({ length: REDIRECT_MAX_FLOWS_REPLY + 1 }, () => flow),
        matched: 600,
        capacity: 8192,
      },
    ],
  ])("rejects a result with %s", (_what, r) => {
    expect(RedirectFlowsResult.safeParse(r).success).toBe(false);
  });

  it(`takes ${REDIRECT_MAX_FLOWS_REPLY} flows`, () => {
    const flows = Array.from({ length: REDIRECT_MAX_FLOWS_REPLY }, () => flow);
    expect(RedirectFlowsResult.safeParse({ flows, matched: 9000, capacity: 8192 }).success).toBe(true);
  });

  it("takes the daemon's own flows line as a flows reply", () => {
    const parsed = redirectControlReplies.flows.parse(JSON.parse(daemonFlows));
    expect(parsed.ok && parsed.result.flows.map((f) => f.client_port)).toEqual([45000, 56278]);
  });

  it("names the flow kinds and limits as the C headers do", async () => {
    const read = (file: string) =>
      readFile(new URL(`../../../dataplane/redirect/${file}`, import.meta.url), "utf8");
    const [structs, consts, control] = await Promise.all([
      read("tide_redirect_structs.h"),
      read("tide_redirect_consts.h"),
      read("control.h"),
    ]);
    const kinds = [
      ...(structs.split("#define TIDE_REDIRECT_FLOW_KINDS(X)")[1]?.split(/\n\s*\n/)[0] ?? "").matchAll(
        /X\(\w+, (\w+)\)/g,
      ),
    ].map((m) => m[1]);
    // The kinds are RedirectFlow's last three fields, in the C enum's order.
    expect(kinds).toEqual(["second_chance", "alternate_hash", "last_resort"]);
    expect(Object.keys(RedirectFlow.shape).slice(-3)).toEqual(kinds);
    const define = (text: string, name: string) =>
      Number(new RegExp(`#define ${name} (\\d+)`).exec(text)?.[1]);
    expect(define(consts, "TIDE_REDIRECT_MAX_FLOWS")).toBe(REDIRECT_MAX_FLOWS);
    expect(define(control, "REDIRECT_MAX_FLOWS_REPLY")).toBe(REDIRECT_MAX_FLOWS_REPLY);
    expect(define(control, "REDIRECT_FLOWS_DEFAULT_SINCE_MS")).toBe(REDIRECT_FLOWS_DEFAULT_SINCE_MS);
    expect(define(control, "REDIRECT_FLOWS_MAX_SINCE_MS")).toBe(REDIRECT_FLOWS_MAX_SINCE_MS);
  });

  it("is not a stats result, and stats is not a flows result", () => {
    expect(
      redirectControlReplies.stats.safeParse({
        id: 1,
        ok: true,
        result: { flows: [], matched: 0, capacity: 1 },
      }).success,
    ).toBe(false);
    expect(redirectControlReplies.flows.safeParse(JSON.parse(daemonStats)).success).toBe(false);
  });
});

describe("RedirectStatusResult", () => {
  it.each<[string, unknown]>([
    ["a local-time start", { ...statusResult, started_at: "2025-01-02T03:04:05+02:00" }],
    ["a version that is not semver", { ...statusResult, version: "latest" }],
    ["an interface name over 15 bytes", { ...statusResult, iface: "a-very-long-ifname" }],
    ["no local address", { ...statusResult, local_addresses: [] }],
  ])("rejects %s", (_what, result) => {
    expect(RedirectStatusResult.safeParse(result).success).toBe(false);
  });
});

describe("redirect-control.schema.json", () => {
  it("is what `npm run schemas` generates (regenerate it after changing the zod schemas)", async () => {
    const committed = await readFile(REDIRECT_CONTROL_SCHEMA_FILE, "utf8");
    expect(committed).toBe(await renderRedirectControlSchema());
  });

  it("has $defs for the request, the reply and each result", () => {
    const schema = redirectControlJsonSchema();
    expect(Object.keys(schema.$defs ?? {})).toEqual(
      expect.arrayContaining([
        "RedirectControlRequest",
        "RedirectControlReply",
        "RedirectStatusResult",
        "RedirectStatsResult",
        "RedirectConfigResult",
        "RedirectCounters",
        "RedirectVip",
        "RedirectVipCounters",
        "RedirectFlowsResult",
        "RedirectFlow",
        "RedirectFlowKind",
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
    visit(redirectControlJsonSchema(), "#");
    expect(undescribed).toEqual([]);
    expect(open).toEqual([]);
  });
});
