import { decodeGlbd, tableContentHash } from "@tide/forwarding";
import { describe, expect, it } from "vitest";
import { buildLabTable, labTableSpec } from "./lab-table";
import { buildGlbTopology } from "./topology";

const t = buildGlbTopology();

describe("buildLabTable", () => {
  it("defaults every proxy to active and healthy", () => {
    const table = buildLabTable(t);
    expect(table.states).toEqual({ prx1: "active", prx2: "active", prx3: "active" });
    expect(table.health).toEqual({ prx1: true, prx2: true, prx3: true });
  });

  it("hashes the encoded file, deterministically", () => {
    const a = buildLabTable(t);
    const b = buildLabTable(t);
    expect(a.hash).toBe(tableContentHash(a.bytes));
    expect(a.hash).toBe(b.hash);
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("changes the table when a proxy drains", () => {
    const active = buildLabTable(t);
    const draining = buildLabTable(t, { prx1: "draining" });
    expect(draining.hash).not.toBe(active.hash);
    const decoded = decodeGlbd(draining.bytes)[0]!;
    const prx1 = decoded.backends.findIndex((b) => b.address === "10.100.11.2");
    expect(decoded.primary.includes(prx1)).toBe(false);
  });

  it("binds the VIP on the test server ports", () => {
    const { spec } = labTableSpec(t);
    expect(spec.binds.map((b) => `${b.proto}/${b.address}:${b.portStart}`)).toEqual([
      "tcp/10.200.0.10:80",
      "tcp/10.200.0.10:9000",
      "udp/10.200.0.10:9000",
    ]);
    expect(spec.backends.map((b) => b.address)).toEqual(["10.100.11.2", "10.100.12.2", "10.100.13.2"]);
  });

  it("refuses unknown proxies and states", () => {
    expect(() => buildLabTable(t, { prx9: "active" })).toThrow(/no proxy/);
    expect(() => buildLabTable(t, { prx1: "gone" as never })).toThrow(/unknown state/);
  });
});
