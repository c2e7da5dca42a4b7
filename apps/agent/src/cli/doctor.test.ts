import { describe, expect, it } from "vitest";
import { formatDoctor } from "./doctor";

describe("formatDoctor", () => {
  it("says which helpers it ran with and how namespaces were sampled", () => {
    const text = formatDoctor([], [], {
      helpers: [
        {
          name: "tide-probes",
          path: "/repo/dataplane/build/tide-probes",
          source: "checkout",
          detail: "/repo/dataplane/build/tide-probes (built in the checkout)",
        },
        {
          name: "tide-nsdiag",
          path: null,
          source: "not found",
          detail: "not configured, none executable at /usr/lib/tide/tide-nsdiag",
        },
      ],
      collector: { path: "shell", reason: "no nsdiagBinary configured", nsdiag: null },
    });
    expect(text.split("\n")).toEqual([
      "  tide-probes: /repo/dataplane/build/tide-probes (built in the checkout)",
      "  tide-nsdiag: not configured, none executable at /usr/lib/tide/tide-nsdiag",
      "  namespaces sampled by ss per namespace (fallback: no nsdiagBinary configured)",
      "No findings: nothing in the sampled window crosses a threshold.",
      "",
    ]);
  });
});
