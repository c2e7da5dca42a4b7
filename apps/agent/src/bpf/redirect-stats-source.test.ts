import { describe, expect, it } from "vitest";
import { RedirectStatsSource } from "./redirect-stats-source";

describe("RedirectStatsSource", () => {
  it("falls back to JSON without a pin directory, without loading the module", () => {
    let loads = 0;
    const s = new RedirectStatsSource(() => {
      loads++;
      return { ok: false, error: "never" };
    });
    expect(s.state()).toBeNull();
    expect(s.read(null)).toBeNull();
    expect(s.state()).toMatchObject({ source: "json", reason: "no tide-redirect pin directory configured" });
    expect(loads).toBe(0);
  });

  it("falls back to JSON with the module's error when it cannot load", () => {
    const s = new RedirectStatsSource(() => ({ ok: false, error: "npm bpf module not loaded: ABI" }));
    expect(s.read("/run/tide/bpf")).toBeNull();
    expect(s.state()).toEqual({
      component: "redirect",
      source: "json",
      reason: "npm bpf module not loaded: ABI",
      pinPath: "/run/tide/bpf/tide_redirect_stats",
    });
  });

  it("falls back to JSON when the pin is missing", () => {
    const s = new RedirectStatsSource(() => ({
      ok: true,
      bpf: {
        objGet: () => {
          throw new Error("ENOENT");
        },
        createMapRef: () => {
          throw new Error("unreachable");
        },
        MapType: { PERCPU_ARRAY: 6 },
        native: { mapLookupElem: () => -1, mapLookupBatch: () => [-1, 0] },
      },
    }));
    expect(s.read("/nonexistent-tide-pin-dir")).toBeNull();
    expect(s.state()).toMatchObject({ source: "json", reason: expect.stringMatching(/^no pinned map/) });
  });
});
