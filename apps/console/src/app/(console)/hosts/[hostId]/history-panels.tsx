"use client";

import { useQuery } from "@tanstack/react-query";
import { ErrorNotice } from "~/components/error-notice";
import { formatUtc } from "~/components/time-ago";
import { useTRPC } from "~/trpc/react";
import type { RouterOutputs } from "~/trpc/types";
import styles from "../hosts.module.css";
import { HistoryChart } from "./history-chart";
import { historyInput, type HistoryChoice } from "./history-range";
import { nsTitle } from "./namespace-panel";

export type HostHistory = RouterOutputs["hosts"]["history"];

/** How a chart says what it draws: the tier and resolution, and the band when there is one. */
export function tierText(h: HostHistory): { band: boolean; text: string } {
  const band = h.stepS > h.resolutionS || h.tier === "rollups";
  return { band, text: band ? `${h.label}: min–max band, average line` : h.label };
}

/** The tier label, with the range in UTC. */
export function TierLabel({ history }: { history: HostHistory }) {
  const { text } = tierText(history);
  return (
    <span className="muted" data-testid="history-tier" data-tier={history.tier} data-step={history.stepS}>
      {text} · {formatUtc(history.from)} – {formatUtc(history.to)}
    </span>
  );
}

/**
 * The host's counter charts over a range of its history, one panel per namespace, in place of the
 * live charts. Named ranges move with the clock (refetched each minute); custom ranges stay put.
 */
export function HistoryPanels({
  hostId,
  choice,
}: {
  hostId: string;
  choice: Exclude<HistoryChoice, { mode: "live" }>;
}) {
  const trpc = useTRPC();
  const history = useQuery({
    ...trpc.hosts.history.queryOptions(historyInput(hostId, choice)),
    refetchInterval: choice.mode === "range" ? 60_000 : false,
  });
  if (history.error) return <ErrorNotice error={history.error} testId="history-error" />;
  if (!history.data) return <p className="muted">Loading history…</p>;
  const h = history.data;
  const { band } = tierText(h);
  if (h.namespaces.length === 0) {
    return (
      <p className="muted" data-testid="history-empty">
        No history stored for this host in this range. <TierLabel history={h} />
      </p>
    );
  }
  return (
    <>
      {h.namespaces.map((ns) => (
        <HistoryNamespace key={ns.key} ns={ns} band={band} history={h} />
      ))}
    </>
  );
}

function HistoryNamespace({
  ns,
  band,
  history,
}: {
  ns: HostHistory["namespaces"][number];
  band: boolean;
  history: HostHistory;
}) {
  const headingId = `history-${ns.key.replace(/[^A-Za-z0-9_-]/g, "-")}`;
  return (
    <section className="panel" aria-labelledby={headingId} data-testid="history-namespace" data-ns={ns.key}>
      <header className={styles.headWrap}>
        <h2 id={headingId}>{nsTitle(ns)}</h2>
        <TierLabel history={history} />
      </header>
      <div className="body">
        <div className={styles.charts}>
          {ns.series.map((s) => (
            <HistoryChart key={s.counter} series={s} band={band} />
          ))}
        </div>
      </div>
    </section>
  );
}
