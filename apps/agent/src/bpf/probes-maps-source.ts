import { loadNodeBpf, type NodeBpfLoad } from "./node-bpf";
import { NETRX_PIN_NAME, NetRxMaps, type NetRxCpuRaw } from "./netrx-maps";
import { possibleCpus } from "./possible-cpus";
import type { BpfMapsState } from "./redirect-stats-source";

/** The probe read from pinned maps (contract name); the others come from JSON lines only. */
export const NETRX_COMPONENT = "probes:net_rx_softirq";

/**
 * Chooses, per read, where the net_rx_softirq probe's figures come from: tide-probes' pinned
 * tp_netrx/tp_netrx_peak through npm `bpf` when the module loads and the pins are readable, else
 * null (the caller keeps the latest JSON sample). Never throws: every failure is a reason in state().
 */
export class ProbesMapsSource {
  private netrx: NetRxMaps | null = null;
  private latest: BpfMapsState | null = null;

  constructor(
    private readonly load: () => NodeBpfLoad = loadNodeBpf,
    private readonly cpus: () => number = possibleCpus,
  ) {}

  /**
   * NET_RX figures from the maps pinned under `pinDir` (tide-probes --pin-dir), or null = use JSON.
   * `pinError`: what the loader's hello said about pinning (a stale pin left by a killed loader is
   * not read when the new loader could not pin over it).
   */
  readNetRx(pinDir: string | null, pinError: string | null = null): NetRxCpuRaw[] | null {
    if (pinDir === null) return this.json(null, "no tide-probes pin directory configured");
    const pinPath = `${pinDir}/${NETRX_PIN_NAME}`;
    if (pinError !== null) return this.json(pinPath, `tide-probes: ${pinError}`);
    const loaded = this.load();
    if (!loaded.ok) return this.json(pinPath, loaded.error);
    try {
      if (this.netrx?.pinDir !== pinDir) {
        this.netrx?.close();
        this.netrx = new NetRxMaps(loaded.bpf, pinDir, this.cpus());
      }
      const cpus = this.netrx.read();
      this.latest = { component: NETRX_COMPONENT, source: "node-bpf", reason: null, pinPath };
      return cpus;
    } catch (err) {
      return this.json(pinPath, err instanceof Error ? err.message : String(err));
    }
  }

  private json(pinPath: string | null, reason: string): null {
    this.latest = { component: NETRX_COMPONENT, source: "json", reason: reason.slice(0, 300), pinPath };
    return null;
  }

  /** The latest read's source per probe read from maps; empty before any read. */
  states(): BpfMapsState[] {
    return this.latest === null ? [] : [this.latest];
  }

  close(): void {
    this.netrx?.close();
    this.netrx = null;
  }
}

/** The agent's one source (one tide-probes per agent): ProbeLoader reads through it, /metrics and doctor report it. */
export const probesMapsSource = new ProbesMapsSource();
