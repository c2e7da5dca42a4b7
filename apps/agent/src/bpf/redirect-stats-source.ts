import path from "node:path";
import type { RedirectCounters } from "@tide/contracts";
import { loadNodeBpf, type NodeBpfLoad } from "./node-bpf";
import { possibleCpus } from "./possible-cpus";
import { REDIRECT_STATS_PIN_NAME, RedirectStatsMap } from "./redirect-stats-map";

/** Where tide-redirect's counters come from: its pinned map (npm bpf) or its control socket's JSON. */
export type BpfMapsSource = "node-bpf" | "json";

/** The latest choice, for /metrics and doctor. */
export interface BpfMapsState {
  /** "redirect" (tide-redirect's counters) or "probes:<contract probe>" (tide-probes' maps). */
  component: "redirect" | `probes:${string}`;
  source: BpfMapsSource;
  /** Why JSON (the module did not load, no pin configured, the map could not be read); null for node-bpf. */
  reason: string | null;
  /** The pinned map read (node-bpf), or the one that was tried. */
  pinPath: string | null;
}

/**
 * Chooses how tide-redirect's counters are read, per read: the pinned stats map when the `bpf`
 * module loads and the pin is readable, else null (the caller asks the control socket). Never
 * throws: every failure is a reason in `state()`.
 */
export class RedirectStatsSource {
  private map: RedirectStatsMap | null = null;
  private latest: BpfMapsState | null = null;

  constructor(private readonly load: () => NodeBpfLoad = loadNodeBpf) {}

  /** Counters from the pinned map under `pinDir` (tide-redirect --pin-dir), or null = use JSON. */
  read(pinDir: string | null): RedirectCounters | null {
    if (pinDir === null) return this.json(null, "no tide-redirect pin directory configured");
    const pinPath = path.join(pinDir, REDIRECT_STATS_PIN_NAME);
    const loaded = this.load();
    if (!loaded.ok) return this.json(pinPath, loaded.error);
    try {
      if (this.map?.pinPath !== pinPath) {
        this.map?.close();
        this.map = new RedirectStatsMap(loaded.bpf, pinPath, possibleCpus());
      }
      const counters = this.map.read();
      this.latest = { component: "redirect", source: "node-bpf", reason: null, pinPath };
      return counters;
    } catch (err) {
      return this.json(pinPath, err instanceof Error ? err.message : String(err));
    }
  }

  private json(pinPath: string | null, reason: string): null {
    this.latest = { component: "redirect", source: "json", reason: reason.slice(0, 300), pinPath };
    return null;
  }

  /** The latest read's source; null before tide-redirect was read at all. */
  state(): BpfMapsState | null {
    return this.latest;
  }

  close(): void {
    this.map?.close();
    this.map = null;
  }
}

/**
 * The agent's one source: redirectState() reads through it and /metrics and doctor report it
 * (one tide-redirect per agent).
 */
export const redirectStatsSource = new RedirectStatsSource();
