"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { useCallback } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { TimeAgo } from "~/components/time-ago";
import { RemoveHost } from "~/features/hosts/remove-host";
import type { RouterOutputs } from "~/trpc/types";
import { useTRPC } from "~/trpc/react";
import { FindingCard } from "../../findings/finding-card";
import findingStyles from "../../findings/findings.module.css";
import { SeverityBadge } from "../../findings/severity-badge";
import styles from "../hosts.module.css";
import { DataPlanePanels } from "./dataplane-panel";
import { BccTable, CpuTable, PathTable, ProbeTable } from "./host-sections";
import { HistoryPanels } from "./history-panels";
import { historyChoiceOf } from "./history-range";
import { LatencyPanels } from "./latency-panels";
import { PmtuTargetsForm } from "./pmtu-targets-form";
import { NamespacePanel } from "./namespace-panel";
import { RangeSelector } from "./range-selector";
import { useHostLive } from "./use-host-live";

/**
 * One host: health, counter charts per namespace (live, or a range of the history chosen in the
 * URL), listeners, connect() and NET_RX latency, the data plane with live packet rates, CPUs, paths,
 * probes, findings.
 */
export function HostView({ hostId }: { hostId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const host = useQuery(trpc.hosts.get.queryOptions({ hostId }));
  const findings = useQuery(trpc.findings.list.queryOptions({ hostId, limit: 200 }));
  // New samples may open, change or resolve findings: refetch them when the server says so.
  const onSamples = useCallback(() => {
    void queryClient.invalidateQueries({ queryKey: trpc.findings.list.queryKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.hosts.get.queryKey({ hostId }) });
    void queryClient.invalidateQueries({ queryKey: trpc.hosts.latency.queryKey() });
  }, [queryClient, trpc, hostId]);
  const live = useHostLive(hostId, onSamples);
  const choice = historyChoiceOf(useSearchParams());

  if (host.error) return <ErrorNotice error={host.error} />;
  if (!host.data) return <p className="muted">Loading host…</p>;
  const h = host.data;
  const view = live.view;
  const openFindings = (findings.data ?? []).filter((f) => f.status !== "resolved");

  return (
    <div className={styles.page}>
      <div className={styles.facts}>
        <h1 data-testid="host-name">{h.name}</h1>
        <SeverityBadge severity={h.health.worstSeverity} />
        <span>
          last seen {h.lastSeenAt ? <TimeAgo iso={h.lastSeenAt} /> : "never"}
          {h.health.stale && <span className={styles.stale}> stale</span>}
        </span>
        <span className="muted">roles {h.roles.join(", ") || "—"}</span>
        <span className="muted mono">agent {h.agentVersion ?? "—"}</span>
        <span className="muted mono">kernel {h.kernelRelease ?? "—"}</span>
        <span className={styles.live} data-state={live.state} data-testid="live-state" role="status">
          {live.state === "live" ? "● live" : live.state === "offline" ? "○ reconnecting" : "○ connecting"}
          {view?.sampledAt && (
            <>
              {" "}
              · newest sample <TimeAgo iso={view.sampledAt} />
            </>
          )}
        </span>
        <Link href="/hosts">All hosts</Link>
      </div>
      {h.versionSkew && (
        <p className={styles.versionSkew} role="alert" data-testid="version-skew">
          {h.versionSkew} The console refuses this agent until then.
        </p>
      )}
      <AgentDrops dropped={h.samplesDropped} />

      <section className="panel" aria-labelledby="host-findings-heading">
        <header>
          <h2 id="host-findings-heading">Open findings</h2>
          <span className="muted">{openFindings.length}</span>
          <Link href={`/findings?host=${h.id}`}>all findings of this host</Link>
        </header>
        {/* A finding's evidence table is wide: it scrolls here rather than the page on a phone. */}
        <div className={`body ${styles.findingsBody}`}>
          {findings.error ? (
            <ErrorNotice error={findings.error} />
          ) : openFindings.length === 0 ? (
            <p className="muted">No open findings.</p>
          ) : (
            <ul className={findingStyles.list} data-testid="host-findings">
              {openFindings.map((f) => (
                <FindingCard key={f.id} finding={f} hostName={h.name} />
              ))}
            </ul>
          )}
        </div>
      </section>

      <RangeSelector hostId={hostId} choice={choice} />

      {choice.mode !== "live" ? (
        <HistoryPanels hostId={hostId} choice={choice} />
      ) : !view ? (
        <p className="muted">Connecting to live samples…</p>
      ) : view.namespaces.length === 0 ? (
        <p className="muted" data-testid="no-samples">
          No samples from this host in the last five minutes.
        </p>
      ) : (
        view.namespaces.map((ns) => <NamespacePanel key={ns.key} ns={ns} counters={view.counters} />)
      )}

      <LatencyPanels hostId={h.id} />

      {view && <DataPlanePanels view={view} />}

      {view && (
        <section className="panel" aria-labelledby="paths-heading">
          <header>
            <h2 id="paths-heading">Path MTU</h2>
          </header>
          <PmtuTargetsForm hostId={h.id} targets={h.pmtuTargets} reported={view.paths.map((p) => p.target)} />
          <PathTable paths={view.paths} />
        </section>
      )}

      {view && (
        <div className={styles.grid2}>
          <section className="panel" aria-labelledby="cpu-heading">
            <header>
              <h2 id="cpu-heading">Softnet and NET_RX per CPU</h2>
            </header>
            <CpuTable cpus={view.cpus} />
          </section>
          <section className="panel" aria-labelledby="probes-heading">
            <header>
              <h2 id="probes-heading">Probes</h2>
            </header>
            <ProbeTable probes={view.probes} />
            <BccTable tools={h.bccTools} />
          </section>
        </div>
      )}

      <RemoveHost hostId={h.id} name={h.name} />
    </div>
  );
}

type HostDetail = RouterOutputs["hosts"]["get"];

const DROP_WORDS: Record<keyof NonNullable<HostDetail["samplesDropped"]>, string> = {
  buffer_full: "over its offline buffer's bound (console unreachable too long)",
  refused: "refused by the console",
  in_future: "dated ahead of the console's clock",
  too_old: "older than the console's retention",
  spool_damaged: "unreadable in its spool after a restart",
};

/** Samples the agent could not deliver: the host's history has holes, and this says why. */
function AgentDrops({ dropped }: { dropped: HostDetail["samplesDropped"] }) {
  if (!dropped) return null;
  const parts = (Object.keys(DROP_WORDS) as (keyof typeof DROP_WORDS)[])
    .filter((k) => dropped[k] > 0)
    .map((k) => `${dropped[k].toLocaleString("en-US")} ${DROP_WORDS[k]}`);
  if (parts.length === 0) return null;
  const total = Object.values(dropped).reduce((a, b) => a + b, 0);
  return (
    <p className={styles.drops} role="note" data-testid="agent-drops">
      This host&apos;s agent dropped {total.toLocaleString("en-US")} sample{total === 1 ? "" : "s"} the
      console never stored: {parts.join("; ")}. Its history has gaps there.
    </p>
  );
}
