import { describe, expect, it } from "vitest";
import type { NodeBpf } from "./node-bpf";
import { ProbesMapsSource } from "./probes-maps-source";

const missingPins: NodeBpf = {
  objGet: () => {
    throw new Error("ENOENT");
  },
  createMapRef: () => {
    throw new Error("unreachable");
  },
  MapType: { PERCPU_ARRAY: 6 },
  native: { mapLookupElem: () => -1, mapLookupBatch: () => [-1, 0] },
};

describe("ProbesMapsSource", () => {
  it("falls back to JSON lines without a pin directory, without loading the module", () => {
    let loads = 0;
    const s = new ProbesMapsSource(() => {
      loads++;
      return { ok: false, error: "never" };
    });
    expect(s.states()).toEqual([]);
    expect(s.readNetRx(null)).toBeNull();
    expect(s.states()).toEqual([
      {
        component: "probes:net_rx_softirq",
        source: "json",
        reason: "no tide-probes pin directory configured",
        pinPath: null,
      },
    ]);
    expect(loads).toBe(0);
  });

  it("does not read a pin the loader said it could not make (a stale one may be there)", () => {
    const s = new ProbesMapsSource(() => ({ ok: true, bpf: missingPins }));
    expect(s.readNetRx("/p", "cannot pin maps in /p: File exists")).toBeNull();
    expect(s.states()[0]).toMatchObject({
      source: "json",
      reason: "tide-probes: cannot pin maps in /p: File exists",
      pinPath: "/p/tp_netrx",
    });
  });

  it("falls back with the module's error, and when the pins are missing", () => {
    const noModule = new ProbesMapsSource(() => ({ ok: false, error: "npm bpf module not loaded: ABI" }));
    expect(noModule.readNetRx("/p")).toBeNull();
    expect(noModule.states()[0]).toMatchObject({ source: "json", reason: "npm bpf module not loaded: ABI" });
    const noPins = new ProbesMapsSource(
      () => ({ ok: true, bpf: missingPins }),
      () => 2,
    );
    expect(noPins.readNetRx("/nonexistent-tide-probes-pins")).toBeNull();
    expect(noPins.states()[0]).toMatchObject({
      source: "json",
      reason: expect.stringMatching(/^no pinned map/),
    });
  });
});
