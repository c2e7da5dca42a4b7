import { TideError } from "@tide/contracts";
import { buildTable } from "@tide/forwarding";
import { describe, expect, it } from "vitest";
import { countMovedFlows, parseHashFields, sampleFlows } from "./hash-fields.plan";

const key = (b: number) => new Uint8Array(16).fill(b);

function table(proxies: number) {
  return buildTable({
    hashKey: key(1),
    seed: key(2),
    binds: [{ address: "203.0.113.10", prefixBits: 32, proto: "tcp", portStart: 443, portEnd: 443 }],
    backends: Array.from({ length: proxies }, (_, i) => ({
      address: `10.0.0.${i + 1}`,
      state: "active" as const,
      healthy: true,
    })),
  });
}

describe("hash-field preview", () => {
  it("samples the same flows every time, to the bind's address and port", () => {
    const a = sampleFlows({ address: "203.0.113.64/26", portStart: 8000 }, 100);
    expect(a).toEqual(sampleFlows({ address: "203.0.113.64/26", portStart: 8000 }, 100));
    expect(new Set(a.map((f) => f.srcAddr)).size).toBeGreaterThan(95);
    expect(a.every((f) => f.dstAddr === "203.0.113.64" && f.dstPort === 8000)).toBe(true);
    expect(a.every((f) => f.srcPort! >= 32768 && f.srcPort! < 61000)).toBe(true);
  });

  it("moves no flow when the fields are unchanged, and about (k-1)/k of them with k proxies", () => {
    const t = table(4);
    const flows = sampleFlows({ address: "203.0.113.10", portStart: 443 }, 4096);
    expect(countMovedFlows(t, ["src_addr"], ["src_addr"], flows)).toBe(0);
    const moved = countMovedFlows(t, ["src_addr"], ["src_addr", "src_port"], flows) / flows.length;
    // Rows are independent under the two hashes: P(same primary) ~ 1/4.
    expect(moved).toBeGreaterThan(0.7);
    expect(moved).toBeLessThan(0.8);
    // dst_addr is the same for every sample flow, so adding it changes each digest too.
    expect(countMovedFlows(t, ["src_addr"], ["src_addr", "dst_addr"], flows)).toBeGreaterThan(2000);
  });

  it("parses comma-separated fields into hashing order, refusing unknown or repeated ones", () => {
    expect(parseHashFields("src_port, src_addr")).toEqual(["src_addr", "src_port"]);
    expect(parseHashFields(["dst_port", "src_addr"])).toEqual(["src_addr", "dst_port"]);
    for (const bad of ["src_addr,src_addr", "src_ip", ""]) {
      const e = (() => {
        try {
          parseHashFields(bad);
        } catch (err) {
          return err;
        }
        return null;
      })();
      expect(e, bad).toBeInstanceOf(TideError);
      expect((e as TideError).details?.fields).toHaveProperty("hashFields");
    }
  });
});
