import { describe, expect, it } from "vitest";
import { goldenJson } from "./__fixtures__/testdata";
import { GlbConfigError, parseGlbConfigJson } from "./glb-json";

const base = () => JSON.parse(goldenJson("golden-drain")) as { tables: Record<string, unknown>[] };

function errorOf(doc: unknown): GlbConfigError {
  try {
    parseGlbConfigJson(typeof doc === "string" ? doc : JSON.stringify(doc));
  } catch (e) {
    if (e instanceof GlbConfigError) return e;
    throw e;
  }
  throw new Error("expected a GlbConfigError");
}

describe("parseGlbConfigJson", () => {
  it("reads the golden spec: keys, CIDR binds, port ranges, IPv6 and UDP binds", () => {
    const [spec] = parseGlbConfigJson(goldenJson("golden-drain"));
    expect(Buffer.from(spec!.hashKey).toString("hex")).toBe("a1b2c3d4e5f60718293a4b5c6d7e8f90");
    expect(Buffer.from(spec!.seed).toString("hex")).toBe("0f1e2d3c4b5a69788796a5b4c3d2e1f0");
    expect(spec!.binds).toEqual([
      { address: "203.0.113.10", prefixBits: 32, proto: "tcp", portStart: 443, portEnd: 443 },
      { address: "203.0.113.64", prefixBits: 26, proto: "tcp", portStart: 8000, portEnd: 8099 },
      { address: "2001:db8::10", prefixBits: 128, proto: "tcp", portStart: 443, portEnd: 443 },
      { address: "203.0.113.10", prefixBits: 32, proto: "udp", portStart: 53, portEnd: 53 },
    ]);
    expect(spec!.backends[3]).toEqual({ address: "10.20.0.13", state: "draining", healthy: true });
  });

  it.each<[string, (d: ReturnType<typeof base>) => unknown, string]>([
    ["not JSON", () => "{", "$"],
    ["no tables", () => ({}), "tables"],
    ["short hash_key", (d) => ((d.tables[0]!.hash_key = "abcd"), d), "tables[0].hash_key"],
    ["non-hex seed", (d) => ((d.tables[0]!.seed = "zz".repeat(16)), d), "tables[0].seed"],
    [
      "bad backend ip",
      (d) => (((d.tables[0]!.backends as Record<string, unknown>[])[2]!.ip = "10.20.0.300"), d),
      "tables[0].backends[2].ip",
    ],
    [
      "unknown state",
      (d) => (((d.tables[0]!.backends as Record<string, unknown>[])[1]!.state = "up"), d),
      "tables[0].backends[1].state",
    ],
    [
      "missing healthy",
      (d) => (delete (d.tables[0]!.backends as Record<string, unknown>[])[0]!.healthy, d),
      "tables[0].backends[0].healthy",
    ],
    [
      "duplicate backend",
      (d) => (((d.tables[0]!.backends as Record<string, unknown>[])[4]!.ip = "10.20.0.10"), d),
      "tables[0].backends[4].ip",
    ],
    [
      "bad proto",
      (d) => (((d.tables[0]!.binds as Record<string, unknown>[])[0]!.proto = "sctp"), d),
      "tables[0].binds[0].proto",
    ],
    [
      "port out of range",
      (d) => (((d.tables[0]!.binds as Record<string, unknown>[])[0]!.port = 70000), d),
      "tables[0].binds[0].port",
    ],
    [
      "reversed range",
      (d) => (((d.tables[0]!.binds as Record<string, unknown>[])[1]!.port_end = 7000), d),
      "tables[0].binds[1]",
    ],
    [
      "bad prefix",
      (d) => (((d.tables[0]!.binds as Record<string, unknown>[])[1]!.ip = "203.0.113.64/40"), d),
      "tables[0].binds[1].ip",
    ],
    ["backends not an array", (d) => ((d.tables[0]!.backends = {}), d), "tables[0].backends"],
    [
      "all inactive",
      (d) => ((d.tables[0]!.backends as Record<string, unknown>[]).forEach((b) => (b.state = "inactive")), d),
      "tables[0].backends",
    ],
  ])("rejects %s with the field path", (_what, edit, path) => {
    const err = errorOf(edit(base()));
    expect(err.path).toBe(path);
    expect(err.message.startsWith(`${path}: `)).toBe(true);
  });
});
