import path from "node:path";
import { diagnose } from "@tide/diagnostics";
import { netnsKey, type Finding, type Observation } from "@tide/contracts";
import { HostObserver } from "../agent";
import type { HelperChoice } from "../binaries";
import { loadNodeBpf } from "../bpf/node-bpf";
import { probesMapsSource } from "../bpf/probes-maps-source";
import { redirectStatsSource, type BpfMapsState } from "../bpf/redirect-stats-source";
import type { AgentConfig } from "../config";
import { checkTarget, mergeTargets } from "../pmtu/prober";
import type { CollectorState } from "../sampling/namespace-sampler";

/** Pause between doctor samples, in ms. */
const DOCTOR_INTERVAL_MS = 1_000;

/** Sample the host `seconds` + 1 times, one second apart, and diagnose the window locally. */
export async function runDoctor(
  config: AgentConfig,
  seconds: number,
  progress: (line: string) => void,
): Promise<{
  findings: Finding[];
  observations: Observation[];
  collector: CollectorState;
  bpfMaps: BpfMapsState | null;
}> {
  const observer = new HostObserver({ ...config, sampleIntervalMs: DOCTOR_INTERVAL_MS, bcc: false });
  // tide-probes pins its maps there and net_rx_softirq is read from them (JSON lines otherwise).
  observer.probes.pinDir = config.probesPinDir ?? null;
  await observer.start();
  // Path MTU checks of the configured targets run once, alongside sampling (each under its timeouts).
  const targets = mergeTargets(config.pmtuTargets, config.pmtuSizes, []);
  const paths = Promise.all(targets.map((t) => checkTarget(t)));
  const observations: Observation[] = [];
  let collector: CollectorState = observer.sampler.collectorState();
  try {
    for (let i = 0; i <= seconds; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, DOCTOR_INTERVAL_MS));
      const tick = await observer.tick();
      for (const e of tick.errors) progress(`namespace ${e.inode}: ${e.error}`);
      observations.push(tick.observation);
    }
    collector = observer.sampler.collectorState();
  } finally {
    observer.stop();
  }
  if (targets.length > 0) {
    progress(`waiting for path MTU checks of ${targets.map((t) => t.target).join(", ")}`);
    const last = observations[observations.length - 1];
    if (last !== undefined) observations[observations.length - 1] = { ...last, paths: await paths };
  }
  // The console diagnoses a 60 s window and wants 10 s of coverage for rates; doctor takes what it has.
  const findings = diagnose(observations, { minCoverageSeconds: Math.max(1, seconds) });
  return { findings, observations, collector, bpfMaps: redirectStatsSource.state() };
}

function subjectText(f: Finding): string {
  const s = f.subject;
  const parts = [s.hostId];
  if (s.netns !== null) parts.push(`netns ${netnsKey(s.netns)}`);
  if (s.port !== null) parts.push(`port ${s.port}`);
  if (s.process !== null) parts.push(`process ${JSON.stringify(s.process)}`);
  if (s.cpu !== null) parts.push(`cpu ${s.cpu}`);
  if (s.target !== null) parts.push(`target ${s.target}`);
  return parts.join(", ");
}

/** What doctor ran with: the helpers and why each was chosen, how namespaces were sampled. */
export interface DoctorSetup {
  helpers?: readonly HelperChoice[];
  collector?: CollectorState;
  /** How tide-redirect's counters were read; null = no tide-redirect configured. */
  bpfMaps?: BpfMapsState | null;
  /**
   * How tide-probes' figures that can come from maps were read (net_rx_softirq); undefined = the
   * agent's shared probesMapsSource.
   */
  probeMaps?: readonly BpfMapsState[];
  /** Whether the npm bpf module loads (said when no tide-redirect is read). */
  nodeBpf?: { ok: boolean; detail: string };
}

/** The npm bpf module's load result, for doctor. */
export function nodeBpfStatus(): { ok: boolean; detail: string } {
  const r = loadNodeBpf();
  return r.ok ? { ok: true, detail: "loaded" } : { ok: false, detail: r.error };
}

/** Human report of a doctor run. */
export function formatDoctor(
  findings: readonly Finding[],
  observations: readonly Observation[],
  setup: DoctorSetup = {},
): string {
  const last = observations[observations.length - 1];
  const lines: string[] = [];
  if (last !== undefined) {
    const on = last.probes.filter((p) => p.state === "on").map((p) => p.probe);
    lines.push(
      `tide-agent doctor: ${last.hostId}, kernel ${last.kernelRelease ?? "?"}, ${observations.length} samples, ` +
        `${last.namespaces.length} network namespaces, ${last.cpus.length} CPUs, probes on: ${on.length > 0 ? on.join(" ") : "none"}`,
    );
  }
  for (const h of setup.helpers ?? []) lines.push(`  ${h.name}: ${h.detail}`);
  const c = setup.collector;
  if (c !== undefined && c.path !== "undecided")
    lines.push(
      c.path === "nsdiag"
        ? "  namespaces sampled by tide-nsdiag"
        : `  namespaces sampled by ss per namespace (fallback: ${c.reason ?? "?"})`,
    );
  const maps = setup.bpfMaps;
  if (maps !== undefined && maps !== null)
    lines.push(
      maps.source === "node-bpf"
        ? `  tide-redirect counters: node-bpf (pinned map ${maps.pinPath ?? "?"})`
        : `  tide-redirect counters: json over the control socket (fallback: ${maps.reason ?? "?"})`,
    );
  else if (setup.nodeBpf !== undefined) lines.push(`  npm bpf module: ${setup.nodeBpf.detail}`);
  for (const m of setup.probeMaps ?? probesMapsSource.states()) {
    const probe = m.component.replace(/^probes:/, "");
    lines.push(
      m.source === "node-bpf"
        ? `  tide-probes ${probe}: node-bpf (pinned maps in ${path.dirname(m.pinPath ?? "?")}); other probes: json lines`
        : `  tide-probes ${probe}: json lines (fallback: ${m.reason ?? "?"})`,
    );
  }
  if (last !== undefined) {
    for (const p of last.probes)
      if (p.state === "off") lines.push(`  probe ${p.probe} off: ${p.reason} (${p.detail})`);
  }
  for (const p of last?.paths ?? []) {
    lines.push(
      `  path ${p.target}: ${p.reached ? "reached" : "NOT reached"}, pmtu ${p.pmtu ?? "?"}, hops ${p.hops ?? "?"}` +
        (p.blackhole ? ", BLACKHOLE suspected" : ""),
    );
    if (p.blackhole) lines.push(`    ${p.evidence.split("\n")[0]}`);
  }
  if (findings.length === 0) {
    lines.push("No findings: nothing in the sampled window crosses a threshold.");
    return lines.join("\n") + "\n";
  }
  lines.push(`${findings.length} finding(s), worst first:`);
  for (const f of findings) {
    lines.push("");
    lines.push(`[${f.severity.toUpperCase()}] ${f.kind}: ${f.title}`);
    lines.push(`  subject: ${subjectText(f)}`);
    for (const e of f.evidence) {
      const rate = e.ratePerSecond !== null ? ` (${e.ratePerSecond.toFixed(2)}/s)` : "";
      const thr =
        e.threshold !== null
          ? ` [warn ${e.threshold.warn ?? "-"}, critical ${e.threshold.critical ?? "-"}]`
          : "";
      lines.push(`  evidence: ${e.metric} = ${e.value} ${e.unit}${rate}${thr}`);
    }
    lines.push(`  remedy: ${f.remedy.summary}`);
    for (const step of f.remedy.steps) {
      lines.push(`    - [${step.scope}] ${step.action}`);
      if (step.command !== null) lines.push(`      $ ${step.command}`);
    }
  }
  return lines.join("\n") + "\n";
}
