import {
  firstWireIssue,
  LOG2_HISTOGRAM_BUCKETS,
  type ListenCappedSocket,
  type ProbeAvailability,
  type ProbeName,
  type ProbeOffReason,
  type ProbeResults,
  type ProbesHello,
  ProbesLine,
  type ProbesListen,
  type ProbesSample,
} from "@tide/contracts";
import { log2Bucket } from "@tide/diagnostics";
import type { NetRxCpuRaw } from "../bpf/netrx-maps";

/**
 * Reads net_rx_softirq's figures from tide-probes' pinned maps, or returns null (then the latest
 * JSON sample is used). `pinError`: the loader's hello pin_error, or why it pinned nothing.
 */
export type NetRxMapsReader = (pinError: string | null) => NetRxCpuRaw[] | null;

/** Contract probe -> the loader's probe names that must all be on for it (dataplane/probes/README.md). */
export const LOADER_PROBES: Record<ProbeName, readonly string[]> = {
  listen_capped: ["listen_backlog"],
  listen_overflow: ["listen_overflow"],
  connect_latency: ["connect_latency"],
  net_rx_softirq: ["netrx_softirq"],
  icmp_frag_needed: ["icmp_frag_needed"],
};

const PROBE_NAMES = Object.keys(LOADER_PROBES) as ProbeName[];

export function emptyProbeResults(): ProbeResults {
  return { listenCapped: [], listenOverflow: [], connectLatency: [], netRxSoftirq: [], icmpFragNeeded: [] };
}

/** Every probe off with one reason (no loader, loader crashed, disabled). */
export function allProbesOff(reason: ProbeOffReason, detail: string): ProbeAvailability[] {
  return PROBE_NAMES.map((probe) => ({ probe, state: "off", reason, detail: detail.slice(0, 1000) }));
}

/** Map a loader's free-text reason to the contract's closed set. */
export function offReason(text: string): ProbeOffReason {
  const t = text.toLowerCase();
  if (t.includes("disabled") || t.includes("--off")) return "disabled";
  if (t.includes("perm") || t.includes("privilege") || t.includes("root") || t.includes("eacces"))
    return "missing_privilege";
  if (t.includes("btf")) return "btf_missing";
  if (t.includes("tracepoint") || t.includes("enoent") || t.includes("not found"))
    return "tracepoint_missing";
  if (t.includes("layout") || t.includes("unsupported")) return "unsupported_kernel";
  return "load_failed";
}

/**
 * Re-bucket a loader histogram (bucket i covers [bucketLo[i], bucketLo[i+1]) µs) into the contract's
 * log2 buckets (0 holds [0, 2) µs, i >= 1 holds [2^i, 2^(i+1)) µs), trailing zeros dropped.
 */
export function rebucket(hist: readonly number[], bucketLo: readonly number[]): number[] {
  const out = new Array<number>(LOG2_HISTOGRAM_BUCKETS).fill(0);
  hist.forEach((count, i) => {
    const lo = bucketLo[i] ?? 2 ** (i - 1);
    const j = log2Bucket(lo);
    out[j] = (out[j] ?? 0) + count;
  });
  let end = out.length;
  while (end > 0 && out[end - 1] === 0) end--;
  return out.slice(0, end);
}

const comm = (v: string): string => (v !== "" ? v.slice(0, 15) : "?");

/**
 * The probes' state as the loader's JSON lines tell it: availability from `hello`, capped listeners
 * from `listen` events, results from the latest `sample`. Pure: feed it parsed lines.
 */
export class ProbeState {
  private availability: ProbeAvailability[];
  private bucketLo: number[] = [];
  private results: ProbeResults = emptyProbeResults();
  /** Capped listeners by netns:port (the latest listen() call on that port wins). */
  private readonly capped = new Map<string, ListenCappedSocket>();
  /** Per CPU, max_us of the latest JSON sample (the maximum of the loader's last full interval). */
  private readonly jsonNetRxMax = new Map<number, number>();
  /** What the latest hello said about pinning; null = pinned. */
  private pinError: string | null = "tide-probes has not said hello yet";

  constructor(
    initial: ProbeAvailability[] = allProbesOff("loader_crashed", "tide-probes has not said hello yet"),
    /** net_rx_softirq from pinned maps when this returns figures (ProbeLoader with a pin dir). */
    private readonly netRxMaps: NetRxMapsReader | null = null,
  ) {
    this.availability = initial;
  }

  setOff(reason: ProbeOffReason, detail: string): void {
    this.availability = allProbesOff(reason, detail);
    this.results = emptyProbeResults();
  }

  /**
   * Feed one parsed JSON line of the loader. Returns the problem when the line is not a ProbesLine
   * (@tide/contracts; the line changes nothing), else null.
   */
  handle(line: unknown): string | null {
    const r = ProbesLine.safeParse(line);
    if (!r.success) return firstWireIssue(r.error);
    const l = r.data;
    if (l.type === "hello") this.onHello(l);
    else if (l.type === "listen") this.onListen(l);
    else this.onSample(l);
    return null;
  }

  private onHello(line: ProbesHello): void {
    const startedAt = new Date(line.at).toISOString();
    this.bucketLo = line.bucket_lo_us;
    this.availability = PROBE_NAMES.map((probe): ProbeAvailability => {
      const parts = LOADER_PROBES[probe].map((name) => ({ name, state: line.probes[name] }));
      const off = parts.find((p) => p.state?.on !== true);
      if (off === undefined) return { probe, state: "on", startedAt };
      const why = off.state?.on === false ? off.state.reason : "not reported by the loader";
      return { probe, state: "off", reason: offReason(why), detail: `${off.name}: ${why}`.slice(0, 1000) };
    });
    this.results = emptyProbeResults();
    this.capped.clear();
    this.jsonNetRxMax.clear();
    this.pinError =
      line.pin_error !== undefined
        ? line.pin_error
        : line.pin_dir !== undefined
          ? null
          : "tide-probes said no pin_dir in its hello";
  }

  private onListen(line: ProbesListen): void {
    const { netns, port, pid } = line;
    if (netns < 1 || pid < 1 || (line.family !== "inet" && line.family !== "inet6")) return;
    const key = `${netns}:${port}`;
    if (line.limited) {
      this.capped.set(key, {
        netnsInode: netns,
        port,
        pid,
        comm: comm(line.comm),
        requested: Math.max(0, line.requested),
        effective: line.effective,
      });
    } else {
      this.capped.delete(key);
    }
  }

  private onSample(line: ProbesSample): void {
    const bucketLo = this.bucketLo;
    const r = emptyProbeResults();
    for (const o of line.listen_overflow ?? []) {
      if (o.netns >= 1) r.listenOverflow.push({ netnsInode: o.netns, port: o.port, drops: o.drops });
    }
    for (const c of line.connect ?? []) {
      if (c.netns < 1 || c.pid < 1) continue;
      r.connectLatency.push({
        netnsInode: c.netns,
        pid: c.pid,
        comm: comm(c.comm),
        latencyUs: rebucket(c.hist, bucketLo),
        eaddrnotavail: c.eaddrnotavail,
        evenPorts: c.sport_even,
        oddPorts: c.sport_odd,
      });
    }
    this.jsonNetRxMax.clear();
    for (const n of line.netrx ?? []) {
      this.jsonNetRxMax.set(n.cpu, n.max_us);
      r.netRxSoftirq.push({ cpu: n.cpu, durationUs: rebucket(n.hist, bucketLo), intervalMaxUs: n.max_us });
    }
    for (const i of line.icmp_frag_needed ?? []) {
      if (i.netns >= 1) r.icmpFragNeeded.push({ netnsInode: i.netns, sent: i.sent });
    }
    this.results = r;
  }

  probes(): ProbeAvailability[] {
    return this.availability;
  }

  /**
   * Latest results; capped listeners are kept only while a listener on that (netns, port) is still
   * open according to `openListeners` ("inode:port" keys from this tick's ss), when given.
   */
  probeResults(openListeners?: ReadonlySet<string>): ProbeResults {
    const on = new Set(this.availability.filter((a) => a.state === "on").map((a) => a.probe));
    if (openListeners !== undefined) {
      for (const key of this.capped.keys()) if (!openListeners.has(key)) this.capped.delete(key);
    }
    return {
      listenCapped: on.has("listen_capped") ? [...this.capped.values()] : [],
      listenOverflow: on.has("listen_overflow") ? this.results.listenOverflow : [],
      connectLatency: on.has("connect_latency") ? this.results.connectLatency : [],
      netRxSoftirq: on.has("net_rx_softirq") ? this.netRxSoftirq() : [],
      icmpFragNeeded: on.has("icmp_frag_needed") ? this.results.icmpFragNeeded : [],
    };
  }

  /**
   * net_rx_softirq from the pinned maps when they can be read (histograms as of now), else from the
   * latest JSON sample. The loader zeroes tp_netrx_peak after each sample and the agent must not
   * (it would steal the loader's maximum), so the map only knows the maximum of the loader's
   * current, partial interval: intervalMaxUs is the larger of that and the latest sample's max_us,
   * a window from the previous loader sample to now (at least the agent's own interval, as both
   * run at sampleIntervalMs).
   */
  private netRxSoftirq(): ProbeResults["netRxSoftirq"] {
    const fromMaps = this.netRxMaps?.(this.pinError) ?? null;
    if (fromMaps === null) return this.results.netRxSoftirq;
    return fromMaps.map((c) => ({
      cpu: c.cpu,
      durationUs: rebucket(c.hist, this.bucketLo),
      intervalMaxUs: Math.max(c.maxUs, this.jsonNetRxMax.get(c.cpu) ?? 0),
    }));
  }
}
