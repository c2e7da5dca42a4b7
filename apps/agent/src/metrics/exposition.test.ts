import { describe, expect, it } from "vitest";
import { sample } from "@tide/diagnostics/fixtures";
import { renderMetrics } from "./exposition";

describe("/metrics: bcc tools", () => {
  it("exposes each tool's state with its reason, and counts from its histograms", () => {
    const obs = sample(5);
    obs.bcc = {
      tools: [
        { tool: "tcpconnlat", state: "off", reason: "kprobes_unavailable", detail: "no kprobe_events" },
        { tool: "softirqs", state: "on", reason: null, detail: "/usr/sbin/softirqs-bpfcc" },
      ],
      tcpConnectLatency: [{ pid: 77, comm: "curl", latencyUs: [0, 0, 3, 4] }],
      softirqTime: [{ softirq: "net_rx", durationUs: [1, 2, 3] }],
    };
    const text = renderMetrics(obs, [], { bufferedSamples: 0, consoleConnected: null });
    expect(text).toContain('tide_bcc_tool_up{tool="tcpconnlat",reason="kprobes_unavailable"} 0');
    expect(text).toContain('tide_bcc_tool_up{tool="softirqs",reason=""} 1');
    expect(text).toContain('tide_bcc_softirq_runs_total{softirq="net_rx"} 6');
    expect(text).toContain('tide_bcc_tcp_connects_total{pid="77",comm="curl"} 7');
    expect(text.match(/^# TYPE tide_bcc_tool_up gauge$/gm)).toHaveLength(1);
  });

  it("has no bcc series for samples without bcc (older agents' shape)", () => {
    expect(renderMetrics(sample(5), [], { bufferedSamples: 0, consoleConnected: null })).not.toContain(
      "tide_bcc_",
    );
  });
});

describe("/metrics: the console link", () => {
  it("counts samples dropped without being stored, by reason", () => {
    const text = renderMetrics(null, [], {
      bufferedSamples: 3,
      consoleConnected: true,
      samplesDropped: { buffer_full: 2, refused: 1, in_future: 0, too_old: 5 },
    });
    expect(text).toContain("# TYPE tide_agent_samples_dropped_total counter");
    expect(text).toContain('tide_agent_samples_dropped_total{reason="buffer_full"} 2');
    expect(text).toContain('tide_agent_samples_dropped_total{reason="refused"} 1');
    expect(text).toContain('tide_agent_samples_dropped_total{reason="too_old"} 5');
  });

  it("names the console in use (one of consoleUrls); nothing when local-only", () => {
    const text = renderMetrics(null, [], {
      bufferedSamples: 0,
      consoleConnected: false,
      consoleUrl: "http://console-b:3000",
    });
    expect(text).toContain('tide_agent_console_url{url="http://console-b:3000"} 1');
    expect(renderMetrics(null, [], { bufferedSamples: 0, consoleConnected: null })).not.toContain(
      "tide_agent_console_url",
    );
  });
});

describe("/metrics: how BPF maps are read", () => {
  it("says node-bpf when the pinned map was read", () => {
    const text = renderMetrics(null, [], {
      bufferedSamples: 0,
      consoleConnected: null,
      bpfMaps: { component: "redirect", source: "node-bpf", reason: null, pinPath: "/run/tide/bpf/x" },
    });
    expect(text).toContain("# TYPE tide_agent_bpf_maps gauge");
    expect(text).toContain('tide_agent_bpf_maps{component="redirect",source="node-bpf",reason=""} 1');
  });

  it("says json and why on the fallback, nothing when tide-redirect is not read", () => {
    const text = renderMetrics(null, [], {
      bufferedSamples: 0,
      consoleConnected: null,
      bpfMaps: { component: "redirect", source: "json", reason: "no pinned map", pinPath: null },
    });
    expect(text).toContain(
      'tide_agent_bpf_maps{component="redirect",source="json",reason="no pinned map"} 1',
    );
    expect(
      renderMetrics(null, [], { bufferedSamples: 0, consoleConnected: null, bpfMaps: null }),
    ).not.toContain("tide_agent_bpf_maps");
  });

  it("has one series per probe read from maps next to the redirect's", () => {
    const text = renderMetrics(null, [], {
      bufferedSamples: 0,
      consoleConnected: null,
      bpfMaps: { component: "redirect", source: "node-bpf", reason: null, pinPath: "/run/tide/bpf/x" },
      probeMaps: [
        {
          component: "probes:net_rx_softirq",
          source: "json",
          reason: "no pinned map: ENOENT",
          pinPath: "/p",
        },
      ],
    });
    expect(text.match(/# TYPE tide_agent_bpf_maps gauge/g)).toHaveLength(1);
    expect(text).toContain('tide_agent_bpf_maps{component="redirect",source="node-bpf",reason=""} 1');
    expect(text).toContain(
      'tide_agent_bpf_maps{component="probes:net_rx_softirq",source="json",reason="no pinned map: ENOENT"} 1',
    );
    const only = renderMetrics(null, [], {
      bufferedSamples: 0,
      consoleConnected: null,
      bpfMaps: null,
      probeMaps: [{ component: "probes:net_rx_softirq", source: "node-bpf", reason: null, pinPath: "/p" }],
    });
    expect(only).toContain(
      'tide_agent_bpf_maps{component="probes:net_rx_softirq",source="node-bpf",reason=""} 1',
    );
  });
});
