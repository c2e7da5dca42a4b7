"use client";

import { netnsKey } from "@tide/contracts";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { useTRPC } from "~/trpc/react";
import type { RouterOutputs } from "~/trpc/types";
import { HistoryChart } from "../../hosts/[hostId]/history-chart";
import { TierLabel, tierText } from "../../hosts/[hostId]/history-panels";
import { findingWindow, hostHistoryHref } from "../../hosts/[hostId]/history-range";
import { FindingCard } from "../finding-card";
import styles from "../findings.module.css";

type Finding = RouterOutputs["findings"]["get"];

/**
 * One finding: its card, and the history of its evidence around it (issue 16). `historyDays`: the
 * days of history the console keeps (TIDE_OBSERVATION_ROLLUP_DAYS).
 */
export function FindingView({ findingId, historyDays }: { findingId: string; historyDays: number }) {
  const trpc = useTRPC();
  const finding = useQuery(trpc.findings.get.queryOptions({ findingId }));
  const host = useQuery({
    ...trpc.hosts.get.queryOptions({ hostId: finding.data?.hostId ?? "" }),
    enabled: !!finding.data,
  });
  if (finding.error) return <ErrorNotice error={finding.error} />;
  if (!finding.data) return <p className="muted">Loading finding…</p>;
  const f = finding.data;
  const hostName = host.data?.name;
  return (
    <div className={styles.page}>
      <h1>
        Finding on <Link href={`/hosts/${f.hostId}`}>{hostName ?? f.subject.hostId}</Link>
      </h1>
      <EvidenceHistory finding={f} historyDays={historyDays} />
      <ul className={styles.list}>
        <FindingCard finding={f} hostName={hostName} standalone />
      </ul>
    </div>
  );
}

/**
 * The finding's evidence metric over its life: 15 min before it was first seen to 15 min after it
 * resolved (or now), in its namespace, with a link to the host page at that range; only the part
 * within the history kept. The metric is the first evidence row the host page charts (a kernel
 * counter); probe readings have no history.
 */
function EvidenceHistory({ finding, historyDays }: { finding: Finding; historyDays: number }) {
  // The window is fixed when the page opens: a reload asks again, a re-render does not move it.
  const [range] = useState(() => findingWindow(finding, Date.now(), historyDays));
  if (!range) {
    return (
      <section className="panel" aria-labelledby="evidence-history-heading" data-testid="evidence-history">
        <header className={styles.historyHead}>
          <h2 id="evidence-history-heading">Evidence history</h2>
        </header>
        <div className="body">
          <p className="muted" data-testid="evidence-history-gone">
            This finding ended before the oldest history the console keeps ({historyDays} days,
            TIDE_OBSERVATION_ROLLUP_DAYS): its evidence history is gone.
          </p>
        </div>
      </section>
    );
  }
  return <EvidenceChart finding={finding} range={range} />;
}

function EvidenceChart({
  finding,
  range,
}: {
  finding: Finding;
  range: { mode: "custom"; from: string; to: string };
}) {
  const trpc = useTRPC();
  const history = useQuery(
    trpc.hosts.history.queryOptions({ hostId: finding.hostId, from: range.from, to: range.to }),
  );
  const href = hostHistoryHref(finding.hostId, range);
  const h = history.data;
  const metric = h ? finding.evidence.map((e) => e.metric).find((m) => h.counters.includes(m)) : undefined;
  const key = finding.subject.netns ? netnsKey(finding.subject.netns) : "root";
  const ns = h?.namespaces.find((n) => n.key === key);
  const series = metric ? ns?.series.find((s) => s.counter === metric) : undefined;
  return (
    <section className="panel" aria-labelledby="evidence-history-heading" data-testid="evidence-history">
      <header className={styles.historyHead}>
        <h2 id="evidence-history-heading">Evidence history{metric ? `: ${metric}` : ""}</h2>
        {h && <TierLabel history={h} />}
        <Link href={href} data-testid="evidence-history-link">
          host page at this range
        </Link>
      </header>
      <div className="body">
        {history.error ? (
          <ErrorNotice error={history.error} testId="history-error" />
        ) : !h ? (
          <p className="muted">Loading history…</p>
        ) : !metric ? (
          <p className="muted" data-testid="evidence-history-none">
            This finding&apos;s evidence ({finding.evidence.map((e) => e.metric).join(", ") || "none"}) is not
            a counter the history keeps as a chart; the host page shows the host&apos;s counters over this
            range.
          </p>
        ) : !series ? (
          <p className="muted" data-testid="history-empty">
            No history of {metric} stored for this namespace in this range.
          </p>
        ) : (
          <div className={styles.evidenceChart}>
            <HistoryChart series={series} band={tierText(h).band} />
          </div>
        )}
      </div>
    </section>
  );
}
