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

describe("formatDoctor: BPF maps", () => {
  it("says node-bpf with the pin, or json with the reason", () => {
    const viaMap = formatDoctor([], [], {
      bpfMaps: {
        component: "redirect",
        source: "node-bpf",
        reason: null,
        pinPath: "/run/tide/bpf/tide_redirect_stats",
      },
    });
    expect(viaMap).toContain(
      "  tide-redirect counters: node-bpf (pinned map /run/tide/bpf/tide_redirect_stats)\n",
    );
    const viaJson = formatDoctor([], [], {
      bpfMaps: { component: "redirect", source: "json", reason: "no pinned map: ENOENT", pinPath: null },
      nodeBpf: { ok: true, detail: "loaded" },
    });
    expect(viaJson).toContain(
      "  tide-redirect counters: json over the control socket (fallback: no pinned map: ENOENT)\n",
    );
    expect(viaJson).not.toContain("npm bpf module");
  });

  it("says whether the module loads when no tide-redirect is read", () => {
    const text = formatDoctor([], [], {
      bpfMaps: null,
      nodeBpf: { ok: false, detail: "npm bpf module not loaded: x" },
    });
    expect(text).toContain("  npm bpf module: npm bpf module not loaded: x\n");
  });

  it("says where tide-probes' NET_RX figures came from", () => {
    const viaMap = formatDoctor([], [], {
      bpfMaps: null,
      probeMaps: [
        {
          component: "probes:net_rx_softirq",
          source: "node-bpf",
          reason: null,
          pinPath: "/sys/fs/bpf/tide-probes/tp_netrx",
        },
      ],
    });
    expect(viaMap).toContain(
      "  tide-probes net_rx_softirq: node-bpf (pinned maps in /sys/fs/bpf/tide-probes); other probes: json lines\n",
    );
    const viaJson = formatDoctor([], [], {
      probeMaps: [
        {
          component: "probes:net_rx_softirq",
          source: "json",
          reason: "no tide-probes pin directory configured",
          pinPath: null,
        },
      ],
    });
    expect(viaJson).toContain(
      "  tide-probes net_rx_softirq: json lines (fallback: no tide-probes pin directory configured)\n",
    );
  });
});
