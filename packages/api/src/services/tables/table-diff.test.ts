import { buildTable, type Backend, type HashField } from "@tide/forwarding";
import { describe, expect, it } from "vitest";
import { diffPoolTables, type PoolTable } from "./table.service";

/** A pool table as the console keeps it: the built table and its backends with host names. */
function poolTable(backends: Backend[], hashFields: HashField[], binds = [443]): PoolTable {
  const table = buildTable({
    hashKey: Uint8Array.from({ length: 16 }, (_, i) => i + 1),
    seed: Uint8Array.from({ length: 16 }, (_, i) => 2 * i + 1),
    binds: binds.map((port) => ({
      address: "203.0.113.10",
      prefixBits: 32,
      proto: "tcp",
      portStart: port,
      portEnd: port,
    })),
    backends,
  });
  return {
    table: { ...table, hashFields },
    backends: backends.map((b, slot) => ({
      slot,
      proxyId: `prx_${slot}000`,
      hostname: `proxy-${slot + 1}`,
      ...b,
    })),
  };
}

const up = (address: string): Backend => ({ address, state: "active", healthy: true });

describe("diffPoolTables beyond rows", () => {
  const backends = [up("10.0.0.1"), up("10.0.0.2"), up("10.0.0.3")];

  it("a hash-field change moves no row but most flows, and says how many", () => {
    const d = diffPoolTables(
      poolTable(backends, ["src_addr"]),
      poolTable(backends, ["src_addr", "src_port"]),
    );
    expect(d.rowsChanged).toBe(0);
    expect(d.hashFields).toEqual({ before: ["src_addr"], after: ["src_addr", "src_port"], changed: true });
    expect(d.flowsMoved).not.toBeNull();
    // Three proxies: a random flow keeps its proxy about a third of the time.
    expect(d.flowsMoved!.fraction).toBeGreaterThan(0.5);
    expect(d.flowsMoved!.moved).toBe(Math.round(d.flowsMoved!.fraction * d.flowsMoved!.sampled));
  });

  it("names bind changes and a health change that moves no row, with the proxy's host name", () => {
    // Draining in both; then also unhealthy: a draining proxy is primary nowhere, so no row moves.
    const before = [up("10.0.0.1"), { ...up("10.0.0.2"), state: "draining" as const }, up("10.0.0.3")];
    const after = [up("10.0.0.1"), { ...before[1]!, healthy: false }, up("10.0.0.3")];
    const d = diffPoolTables(poolTable(before, ["src_addr"]), poolTable(after, ["src_addr"], [443, 8443]));
    expect(d.flowsMoved).toBeNull();
    expect(d.binds).toEqual({ added: ["tcp 203.0.113.10/32:8443"], removed: [] });
    expect(d.statusChanges).toEqual([
      {
        address: "10.0.0.2",
        hostname: "proxy-2",
        before: { state: "draining", healthy: true },
        after: { state: "draining", healthy: false },
        primaryRowsChanged: 0,
      },
    ]);
  });
});
