import { describe, expect, it } from "vitest";
import { unhex, vectors } from "./__fixtures__/testdata";
import { buildTable } from "./build";
import { explainFlow } from "./explain";
import { flowDigest, flowRow, FlowError, normalizeHashFields, outerSourcePort } from "./flow-hash";

describe("flow hash and explainFlow", () => {
  const flows = vectors().flows;

  it("includes the published vectors", () => {
    expect(flows.filter((f) => f.source === "published")).toHaveLength(4);
  });

  it.each(flows.map((f) => [f.fields.join("+"), f.srcAddr, f.srcPort, f] as const))(
    "%s %s:%i",
    (_f, _a, _p, f) => {
      const flow = { srcAddr: f.srcAddr, srcPort: f.srcPort, dstAddr: f.dstAddr, dstPort: f.dstPort };
      const digest = flowDigest(unhex(f.hashKey), flow, f.fields);
      expect(digest.toString(16).padStart(16, "0")).toBe(f.digest);
      expect(flowRow(digest)).toBe(f.row);
      expect(outerSourcePort(digest, f.srcPort)).toBe(f.outerSourcePort);
      const table = buildTable({
        hashKey: unhex(f.hashKey),
        seed: unhex(f.seed),
        binds: [],
        backends: f.proxies.map((address) => ({ address, state: "active", healthy: true })),
      });
      expect(explainFlow(table, flow, f.fields)).toEqual({
        digest: f.digest,
        row: f.row,
        primary: f.primary,
        secondary: f.secondary,
        outerSourcePort: f.outerSourcePort,
      });
    },
  );

  it("hashes fields in the fixed order whatever order they are given in", () => {
    expect(normalizeHashFields(["dst_port", "src_addr"])).toEqual(["src_addr", "dst_port"]);
    expect(() => normalizeHashFields([])).toThrow(FlowError);
    expect(() => normalizeHashFields(["src_addr", "src_addr"])).toThrow(/twice/);
    expect(() => normalizeHashFields(["proto"])).toThrow(/unknown/);
  });

  it("requires the values of enabled fields", () => {
    const key = new Uint8Array(16);
    expect(() => flowDigest(key, { srcAddr: "10.0.0.1" }, ["src_addr", "src_port"])).toThrow(/srcPort/);
    expect(() => flowDigest(key, { srcAddr: "10.0.0.1" }, ["dst_addr"])).toThrow(/dstAddr/);
  });

  it("keeps the outer source port in 32768..65535", () => {
    expect(outerSourcePort(0n, 0)).toBe(0x8000);
    expect(outerSourcePort(0x7fffn, 0)).toBe(0xffff);
    expect(outerSourcePort(0xffffn, 0xffff)).toBe(0x8000);
  });
});
