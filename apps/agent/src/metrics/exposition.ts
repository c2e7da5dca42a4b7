import type { DataPlaneState, Observation } from "@tide/contracts";
import { probesMapsSource } from "../bpf/probes-maps-source";
import { redirectStatsSource, type BpfMapsState } from "../bpf/redirect-stats-source";
import type { CollectorState } from "../sampling/namespace-sampler";

/** Counters exported per namespace: nstat name -> metric name (Prometheus conventions, _total). */
export const NAMESPACE_COUNTERS: Record<string, string> = {
  TcpExtListenOverflows: "tide_netns_tcpext_listen_overflows_total",
  TcpExtListenDrops: "tide_netns_tcpext_listen_drops_total",
  TcpExtTCPReqQFullDoCookies: "tide_netns_tcpext_reqq_full_do_cookies_total",
  TcpExtTCPReqQFullDrop: "tide_netns_tcpext_reqq_full_drop_total",
  TcpExtSyncookiesSent: "tide_netns_tcpext_syncookies_sent_total",
  TcpExtSyncookiesRecv: "tide_netns_tcpext_syncookies_recv_total",
  TcpExtSyncookiesFailed: "tide_netns_tcpext_syncookies_failed_total",
  TcpExtTCPRcvCollapsed: "tide_netns_tcpext_rcv_collapsed_total",
  TcpExtPruneCalled: "tide_netns_tcpext_prune_called_total",
  TcpExtRcvPruned: "tide_netns_tcpext_rcv_pruned_total",
  TcpExtOfoPruned: "tide_netns_tcpext_ofo_pruned_total",
  IpFragFails: "tide_netns_ip_frag_fails_total",
  IcmpMsgOutType3: "tide_netns_icmpmsg_out_type3_total",
  TcpActiveOpens: "tide_netns_tcp_active_opens_total",
  TcpPassiveOpens: "tide_netns_tcp_passive_opens_total",
};

/** Escape a label value (backslash, double quote, newline). */
export function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function labels(l: Record<string, string | number>): string {
  const parts = Object.entries(l).map(([k, v]) => `${k}="${escapeLabel(String(v))}"`);
  return parts.length > 0 ? `{${parts.join(",")}}` : "";
}

class Exposition {
  private readonly families = new Map<string, { help: string; type: string; lines: string[] }>();
  add(
    name: string,
    type: "counter" | "gauge",
    help: string,
    l: Record<string, string | number>,
    value: number,
  ): void {
    let f = this.families.get(name);
    if (f === undefined) {
      f = { help, type, lines: [] };
      this.families.set(name, f);
    }
    f.lines.push(`${name}${labels(l)} ${Number.isFinite(value) ? value : "NaN"}`);
  }
  text(): string {
    let out = "";
    for (const [name, f] of this.families) {
      out += `# HELP ${name} ${f.help}\n# TYPE ${name} ${f.type}\n${f.lines.join("\n")}\n`;
    }
    return out;
  }
}

/** Namespace label: "root", the /run/netns name, or the inode. */
export function namespaceLabel(netns: Observation["namespaces"][number]["netns"]): string {
  return netns.root ? "root" : (netns.name ?? String(netns.inode));
}

/** Prometheus text exposition (version 0.0.4) of the latest observation and data plane state. */
export function renderMetrics(
  obs: Observation | null,
  dataPlane: readonly DataPlaneState[],
  agent: {
    bufferedSamples: number;
    consoleConnected: boolean | null;
    /** The console the agent sends to (of consoleUrls, the one in use); null/absent = local-only. */
    consoleUrl?: string | null;
    /**
     * Samples that left the buffer without being stored, by reason (ConsoleLink.samplesDropped):
     * buffer_full, refused (the console answered 4xx to the sample alone), in_future, too_old.
     */
    samplesDropped?: Readonly<Record<string, number>>;
    /** Age of each namespace's sysctls (they are re-read every 10 s, not every tick), by inode, ms. */
    sysctlAgesMs?: ReadonlyMap<number, number>;
    /** How namespaces are sampled (tide-nsdiag, or the ss-per-namespace fallback and why). */
    collector?: CollectorState;
    /**
     * How tide-redirect's counters were last read: its pinned map through npm `bpf`, or the control
     * socket's JSON and why. Undefined = the agent's shared redirectStatsSource; null = not reported.
     */
    bpfMaps?: BpfMapsState | null;
    /**
     * How tide-probes' figures read from maps (net_rx_softirq) were last read: its pinned maps or
     * its JSON lines and why. Undefined = the agent's shared probesMapsSource; [] = not reported.
     */
    probeMaps?: readonly BpfMapsState[];
  },
): string {
  const e = new Exposition();
  e.add("tide_agent_buffered_samples", "gauge", "Samples waiting for the console", {}, agent.bufferedSamples);
  for (const [reason, n] of Object.entries(agent.samplesDropped ?? {})) {
    e.add(
      "tide_agent_samples_dropped_total",
      "counter",
      "Samples dropped without being stored, by reason (buffer_full, refused, in_future, too_old)",
      { reason },
      n,
    );
  }
  const c = agent.collector;
  if (c !== undefined && c.path !== "undecided") {
    e.add(
      "tide_agent_namespace_collector",
      "gauge",
      "1 for the path sampling namespaces: nsdiag (one tide-nsdiag) or shell (ss per namespace, fallback)",
      { path: c.path, reason: c.reason ?? "" },
      1,
    );
    if (c.nsdiag !== null) {
      e.add(
        "tide_agent_nsdiag_up",
        "gauge",
        "1 while tide-nsdiag runs (0 while it is being restarted)",
        { state: c.nsdiag.state },
        c.nsdiag.state === "running" ? 1 : 0,
      );
      e.add(
        "tide_agent_nsdiag_restarts_total",
        "counter",
        "Times tide-nsdiag died or hung and was restarted",
        {},
        c.nsdiag.restarts,
      );
    }
  }
  const maps = agent.bpfMaps === undefined ? redirectStatsSource.state() : agent.bpfMaps;
  const probeMaps = agent.probeMaps ?? probesMapsSource.states();
  for (const m of [...(maps === null ? [] : [maps]), ...probeMaps])
    e.add(
      "tide_agent_bpf_maps",
      "gauge",
      "1 for how BPF figures are read, by component (redirect, probes:<probe>): node-bpf (pinned BPF map, " +
        "npm bpf) or json (tide-redirect's control socket or tide-probes' JSON lines, fallback)",
      { component: m.component, source: m.source, reason: m.reason ?? "" },
      1,
    );
  if (agent.consoleConnected !== null)
    e.add(
      "tide_agent_console_connected",
      "gauge",
      "1 when the last console call succeeded",
      {},
      agent.consoleConnected ? 1 : 0,
    );
  if (agent.consoleUrl !== undefined && agent.consoleUrl !== null)
    e.add(
      "tide_agent_console_url",
      "gauge",
      "1 for the console the agent sends to (of its consoleUrls, the one in use or tried next)",
      { url: agent.consoleUrl },
      1,
    );
  if (obs !== null) {
    e.add(
      "tide_agent_last_sample_timestamp_seconds",
      "gauge",
      "When the latest sample was taken",
      {},
      Date.parse(obs.sampledAt) / 1000,
    );
    e.add("tide_netns_count", "gauge", "Network namespaces sampled", {}, obs.namespaces.length);
    for (const ns of obs.namespaces) {
      const nsl = { namespace: namespaceLabel(ns.netns), inode: ns.netns.inode };
      const age = agent.sysctlAgesMs?.get(ns.netns.inode);
      if (age !== undefined)
        e.add(
          "tide_netns_sysctls_age_seconds",
          "gauge",
          "Age of the namespace's sysctl values (cached, re-read every 10 s)",
          nsl,
          age / 1000,
        );
      for (const [counter, metric] of Object.entries(NAMESPACE_COUNTERS)) {
        const v = ns.counters[counter];
        if (v !== undefined) e.add(metric, "counter", `nstat ${counter} of the namespace`, nsl, v);
      }
      if (ns.sockstat !== null) {
        e.add("tide_netns_tcp_inuse", "gauge", "TCP sockets in use (sockstat)", nsl, ns.sockstat.tcpInuse);
        e.add("tide_netns_tcp_tw", "gauge", "TCP sockets in TIME-WAIT (sockstat)", nsl, ns.sockstat.tcpTw);
        e.add(
          "tide_netns_tcp_orphan",
          "gauge",
          "Orphaned TCP sockets (sockstat)",
          nsl,
          ns.sockstat.tcpOrphan,
        );
      }
      if (ns.sysctls.somaxconn !== null)
        e.add(
          "tide_netns_somaxconn",
          "gauge",
          "net.core.somaxconn of the namespace",
          nsl,
          ns.sysctls.somaxconn,
        );
      if (ns.sysctls.tcpSyncookies !== null)
        e.add("tide_netns_tcp_syncookies", "gauge", "net.ipv4.tcp_syncookies", nsl, ns.sysctls.tcpSyncookies);
      if (ns.sysctls.tcpMaxSynBacklog !== null)
        e.add(
          "tide_netns_tcp_max_syn_backlog",
          "gauge",
          "net.ipv4.tcp_max_syn_backlog",
          nsl,
          ns.sysctls.tcpMaxSynBacklog,
        );
      if (ns.sysctls.tcpRmem !== null)
        e.add(
          "tide_netns_tcp_rmem_max_bytes",
          "gauge",
          "net.ipv4.tcp_rmem max, bytes",
          nsl,
          ns.sysctls.tcpRmem[2],
        );
      for (const l of ns.listeners) {
        const ll = { ...nsl, address: l.address, port: l.port };
        e.add(
          "tide_listen_queue",
          "gauge",
          "Accept queue length now (ss Recv-Q of a LISTEN socket)",
          ll,
          l.recvQ,
        );
        e.add(
          "tide_listen_backlog",
          "gauge",
          "Effective backlog (ss Send-Q of a LISTEN socket)",
          ll,
          l.sendQ,
        );
      }
      for (const p of ns.listenPorts)
        e.add("tide_listen_sockets", "gauge", "LISTEN sockets per port", { ...nsl, port: p.port }, p.sockets);
    }
    for (const c of obs.cpus) {
      const cl = { cpu: c.cpu };
      e.add(
        "tide_softnet_processed_total",
        "counter",
        "softnet_stat packets processed",
        cl,
        c.softnetProcessed,
      );
      e.add(
        "tide_softnet_dropped_total",
        "counter",
        "softnet_stat drops (input backlog full)",
        cl,
        c.softnetDropped,
      );
      e.add(
        "tide_softnet_time_squeeze_total",
        "counter",
        "softnet_stat NET_RX out of budget",
        cl,
        c.softnetTimeSqueeze,
      );
      e.add("tide_softirq_net_rx_total", "counter", "NET_RX softirqs (/proc/softirqs)", cl, c.netRxSoftirqs);
    }
    for (const p of obs.probes)
      e.add(
        "tide_probe_up",
        "gauge",
        "1 when the BPF probe is attached",
        { probe: p.probe },
        p.state === "on" ? 1 : 0,
      );
    for (const t of obs.bcc?.tools ?? [])
      e.add(
        "tide_bcc_tool_up",
        "gauge",
        "1 when the bcc tool runs (off: see the reason label)",
        { tool: t.tool, reason: t.reason ?? "" },
        t.state === "on" ? 1 : 0,
      );
    for (const b of obs.bcc?.softirqTime ?? [])
      e.add(
        "tide_bcc_softirq_runs_total",
        "counter",
        "softirq runs seen by bcc softirqs -d",
        { softirq: b.softirq },
        b.durationUs.reduce((a, v) => a + v, 0),
      );
    for (const b of obs.bcc?.tcpConnectLatency ?? [])
      e.add(
        "tide_bcc_tcp_connects_total",
        "counter",
        "Active TCP connections timed by bcc tcpconnlat",
        { pid: b.pid, comm: b.comm },
        b.latencyUs.reduce((a, v) => a + v, 0),
      );
    const r = obs.probeResults;
    for (const o of r.listenOverflow)
      e.add(
        "tide_probe_listen_overflow_drops_total",
        "counter",
        "TCP_LISTEN_OVERFLOW drops per listener port",
        { inode: o.netnsInode, port: o.port },
        o.drops,
      );
    for (const c of r.listenCapped)
      e.add(
        "tide_probe_listen_capped_backlog",
        "gauge",
        "Requested listen() backlog of a capped listener",
        { inode: c.netnsInode, port: c.port, comm: c.comm },
        c.requested,
      );
    for (const n of r.netRxSoftirq)
      e.add(
        "tide_probe_net_rx_max_us",
        "gauge",
        "Longest NET_RX run since the previous sample, µs",
        { cpu: n.cpu },
        n.intervalMaxUs,
      );
    for (const c of r.connectLatency)
      e.add(
        "tide_probe_connect_eaddrnotavail_total",
        "counter",
        "connect() EADDRNOTAVAIL per process",
        { inode: c.netnsInode, pid: c.pid, comm: c.comm },
        c.eaddrnotavail,
      );
    for (const i of r.icmpFragNeeded)
      e.add(
        "tide_probe_icmp_frag_needed_sent_total",
        "counter",
        "ICMP frag-needed the namespace tried to send",
        { inode: i.netnsInode },
        i.sent,
      );
  }
  for (const d of dataPlane) {
    e.add(
      "tide_dataplane_up",
      "gauge",
      "1 when the data plane control socket answered",
      { component: d.component },
      d.reachable ? 1 : 0,
    );
    if (d.directorCounters !== null) {
      e.add(
        "tide_director_rx_packets_total",
        "counter",
        "Director packets received",
        {},
        d.directorCounters.rx_packets,
      );
      e.add(
        "tide_director_forwarded_packets_total",
        "counter",
        "Director packets forwarded",
        {},
        d.directorCounters.forwarded_packets,
      );
    }
    if (d.redirectCounters !== null)
      e.add(
        "tide_redirect_packets_total",
        "counter",
        "GUE packets seen by tide-redirect",
        {},
        d.redirectCounters.total,
      );
  }
  return e.text();
}
