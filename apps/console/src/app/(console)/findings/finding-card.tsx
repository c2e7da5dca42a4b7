"use client";

import type { Evidence, NetnsRef } from "@tide/contracts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { TimeAgo, UtcTime } from "~/components/time-ago";
import { TableScroll } from "~/components/table-scroll";
import { useHasScope } from "~/features/session/session-context";
import { useTRPC } from "~/trpc/react";
import type { RouterOutputs } from "~/trpc/types";
import { CopyCommand } from "./copy-command";
import styles from "./findings.module.css";
import { SeverityBadge } from "./severity-badge";

export type FindingItem = RouterOutputs["findings"]["list"][number];

export function netnsLabel(netns: NetnsRef): string {
  if (netns.root) return "root";
  return netns.name ?? `inode ${netns.inode}`;
}

const unitSuffix: Record<Evidence["unit"], string> = {
  count: "",
  per_second: "/s",
  microseconds: " µs",
  bytes: " B",
  sockets: " sockets",
  ports: " ports",
  ratio: "",
  mtu_bytes: " B (MTU)",
};

function num(v: number): string {
  return Number.isInteger(v) ? v.toLocaleString("en-US") : v.toFixed(2);
}

/**
 * An evidence value as the finding's narrative states it: a rate per second with one decimal (the
 * narrative says "2.5 connections per second"), anything else as it is.
 */
export function evidenceValue(e: Pick<Evidence, "value" | "unit">): string {
  if (e.unit === "per_second") return `${e.value.toFixed(1)}/s`;
  return `${num(e.value)}${unitSuffix[e.unit]}`;
}

/** The window a value covers, in the narrative's words: "over the last 30 s (to 17:31:05Z)". */
export function evidenceWindow(e: Pick<Evidence, "window">): string {
  if (!e.window) return "latest reading";
  return `over the last ${Math.round(e.window.seconds)} s (to ${e.window.to.slice(11, 19)}Z)`;
}

function EvidenceTable({ evidence }: { evidence: Evidence[] }) {
  return (
    <TableScroll label="Evidence">
      <table className="data" data-testid="finding-evidence">
        <thead>
          <tr>
            <th>Metric</th>
            <th className="num">Value</th>
            <th className="num">Threshold warn / crit</th>
            <th>Window</th>
          </tr>
        </thead>
        <tbody>
          {evidence.map((e, i) => (
            <tr key={`${e.metric}-${i}`} data-testid="evidence-row" data-metric={e.metric}>
              <td className="mono">{e.metric}</td>
              <td className="num" data-testid="evidence-value">
                {evidenceValue(e)}
              </td>
              <td className="num">
                {e.threshold
                  ? `${e.threshold.warn === null ? "—" : num(e.threshold.warn)} / ${
                      e.threshold.critical === null ? "—" : num(e.threshold.critical)
                    }`
                  : "—"}
              </td>
              <td className="muted" data-testid="evidence-window">
                {evidenceWindow(e)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

/** The finding's history, read when the operator opens it. */
function History({ findingId }: { findingId: string }) {
  const trpc = useTRPC();
  const detail = useQuery(trpc.findings.get.queryOptions({ findingId }));
  if (detail.error) return <ErrorNotice error={detail.error} />;
  if (!detail.data) return <p className="muted">Loading history…</p>;
  return (
    <ol className={styles.timeline} data-testid="finding-history">
      {detail.data.history.map((h, i) => (
        <li key={i} data-testid="history-event" data-type={h.type}>
          <UtcTime iso={h.at} /> <strong>{h.type.replace("_", " ")}</strong>
          {h.fromSeverity && h.toSeverity && h.fromSeverity !== h.toSeverity
            ? ` ${h.fromSeverity} → ${h.toSeverity}`
            : h.toSeverity
              ? ` as ${h.toSeverity}`
              : ""}{" "}
          <span className="muted">by {h.by}</span>
          {h.detail && <span className="muted"> — {h.detail}</span>}
        </li>
      ))}
    </ol>
  );
}

/** One finding: what, where, the evidence, why, how to fix it, and (for operators) acknowledge. */
export function FindingCard({
  finding,
  hostName,
  standalone = false,
}: {
  finding: FindingItem;
  hostName?: string | undefined;
  /** On the finding's own page: no link to it. */
  standalone?: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const canOperate = useHasScope("operate");
  const [historyOpen, setHistoryOpen] = useState(false);
  const acknowledge = useMutation(
    trpc.findings.acknowledge.mutationOptions({
      onSuccess: () => {
        void queryClient.invalidateQueries({ queryKey: trpc.findings.pathKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.hosts.pathKey() });
      },
    }),
  );
  const s = finding.subject;
  return (
    <li
      className={`panel ${styles.card}`}
      data-testid="finding"
      data-kind={finding.kind}
      data-status={finding.status}
      data-severity={finding.severity}
      data-finding-id={finding.id}
    >
      <header>
        <div className={styles.title}>
          <SeverityBadge severity={finding.severity} />
          <h2 data-testid="finding-title">{finding.title}</h2>
          <span className="muted mono">{finding.kind}</span>
        </div>
        {finding.status === "open" ? (
          <button
            type="button"
            className="small primary"
            disabled={!canOperate || acknowledge.isPending}
            title={
              canOperate
                ? "Take this finding: it stays acknowledged until it resolves"
                : "requires operate scope"
            }
            data-testid="acknowledge"
            onClick={() => acknowledge.mutate({ findingId: finding.id })}
          >
            {acknowledge.isPending ? "Acknowledging…" : "Acknowledge"}
          </button>
        ) : finding.status === "acknowledged" ? (
          <span className={styles.ack} data-testid="acknowledged-by">
            acknowledged by {finding.acknowledgedBy}
            {finding.acknowledgedAt && (
              <>
                {" "}
                <TimeAgo iso={finding.acknowledgedAt} />
              </>
            )}
          </span>
        ) : (
          <span className={styles.ack}>
            resolved {finding.resolvedAt && <TimeAgo iso={finding.resolvedAt} />}
          </span>
        )}
      </header>
      <div className="body">
        {acknowledge.error && <ErrorNotice error={acknowledge.error} />}
        <div className={styles.subject} data-testid="finding-subject">
          <span>
            host <Link href={`/hosts/${finding.hostId}`}>{hostName ?? s.hostId}</Link>
          </span>
          {s.netns && (
            <span>
              namespace <b>{netnsLabel(s.netns)}</b>
            </span>
          )}
          {s.port !== null && (
            <span>
              port <b>{s.port}</b>
            </span>
          )}
          {s.process && (
            <span>
              process <b>{`${s.process.comm} (${s.process.pid})`}</b>
            </span>
          )}
          {s.cpu !== null && (
            <span>
              cpu <b>{s.cpu}</b>
            </span>
          )}
          {s.target && (
            <span>
              {/* Health findings name a proxy or a pool; kernel ones a checked path. */}
              {finding.kind === "proxy_unhealthy" || finding.kind === "pool_fail_open" ? "of" : "path"}{" "}
              <b>{s.target}</b>
            </span>
          )}
          <span>
            first seen <TimeAgo iso={finding.firstSeenAt} />, last seen <TimeAgo iso={finding.lastSeenAt} />
          </span>
          {!standalone && (
            <Link href={`/findings/${finding.id}`} data-testid="finding-link">
              evidence history
            </Link>
          )}
        </div>
        <p className={styles.explanation}>{finding.explanation}</p>
        <div className={styles.section}>
          <h3>Evidence</h3>
          <EvidenceTable evidence={finding.evidence} />
        </div>
        <div className={styles.section}>
          <h3>Remedy: {finding.remedy.summary}</h3>
          <ol className={styles.steps} data-testid="remedy-steps">
            {finding.remedy.steps.map((step, i) => (
              <li key={i}>
                <span className={styles.scope}>{step.scope}</span>
                {step.action}
                {step.command && <CopyCommand command={step.command} />}
              </li>
            ))}
          </ol>
        </div>
        <details
          className={styles.section}
          onToggle={(e) => setHistoryOpen((e.target as HTMLDetailsElement).open)}
        >
          <summary data-testid="history-toggle">History</summary>
          {historyOpen && <History findingId={finding.id} />}
        </details>
      </div>
    </li>
  );
}
