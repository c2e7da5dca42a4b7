"use client";

import {
  transitionFor,
  type ConnectionImpact,
  type Proxy,
  type ProxyAction,
  type TableDiff,
} from "@tide/contracts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { TABLE_ROWS as ROWS } from "@tide/forwarding/types";
import { useState } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { ModalDialog } from "~/components/modal-dialog";
import { backendBackground, backendColor } from "~/components/proxy-colors";
import { ShareChart } from "~/components/share-chart";
import { StateBadge } from "~/components/state-badge";
import { ChangedRows } from "~/features/diff/changed-rows";
import { useHasScope } from "~/features/session/session-context";
import { ServedBy } from "~/features/sync/served-by";
import { useTRPC } from "~/trpc/react";
import styles from "./transition-dialog.module.css";
import { PreviewShares } from "./preview-shares";
import { impactLines, previewSummary, reasonRequired, staleReason } from "./preview-summary";
import { RemainingConnections } from "./remaining-connections";
import { TransitionResult } from "./transition-result";

function Figure({ value, label, testId }: { value: number; label: string; testId: string }) {
  return (
    <div className={styles.figure}>
      <span className={styles.figureValue} data-testid={testId} data-value={value}>
        {value.toLocaleString("en-US")}
      </span>
      <span className={styles.figureLabel}>
        {label} · {((value / ROWS) * 100).toFixed(2)}%
      </span>
    </div>
  );
}

/**
 * The table change of one proxy action: rows whose primary changes (new flows move) and rows whose
 * secondary alone changes (the second chance hop), which add up to the rows changed; the proxies
 * whose rows change; their deviation from an even share; the first changed rows.
 */
function PreviewDiff({ diff }: { diff: TableDiff }) {
  const secondaryOnly = diff.rowsChanged - diff.rowsPrimaryChanged;
  const column = diff.rowsPrimaryChanged > 0 ? "primary" : "secondary";
  return (
    <section data-testid="table-diff" aria-label="Table diff">
      <div className={styles.figures}>
        <Figure value={diff.rowsPrimaryChanged} label="rows, primary changes" testId="rows-primary-changed" />
        <Figure value={secondaryOnly} label="rows, only secondary changes" testId="rows-secondary-only" />
        <span className="muted" data-testid="rows-changed" data-value={diff.rowsChanged}>
          {diff.rowsChanged.toLocaleString("en-US")} rows change in all
        </span>
      </div>
      <PreviewShares shares={diff.shares} />
      {diff.rowsChanged > 0 && (
        <ShareChart
          title={`${column === "primary" ? "Primary" : "Secondary"} rows per proxy, before (faded) and after`}
          hostnames={diff.shares.map((s) => s.hostname)}
          colors={diff.shares.map((_, i) => backendColor(i))}
          backgrounds={diff.shares.map((_, i) => backendBackground(i))}
          series={[
            { name: "before", values: diff.shares.map((s) => s.before[column]), look: "faded" },
            { name: "after", values: diff.shares.map((s) => s.after[column]), look: "solid" },
          ]}
        />
      )}
      <ChangedRows diff={diff} />
    </section>
  );
}

/**
 * What the action does to the connections already established, from the proxies' own reports:
 * how many break (a warning when any do) and how many reach their proxy by second chance; "~"
 * marks an estimate, and proxies without a fresh figure are named rather than counted as 0.
 */
function PreviewImpact({ impact }: { impact: ConnectionImpact }) {
  const lines = impactLines(impact);
  return (
    <section className={styles.impact} aria-label="Established connections" data-testid="preview-impact">
      {lines.breaks && (
        <div
          className={styles.breaks}
          role="alert"
          data-testid="preview-breaks"
          data-count={lines.breaks.count}
        >
          {lines.breaks.text}
        </div>
      )}
      <p
        className={styles.summaryLine}
        data-testid="preview-impact-summary"
        data-broken={impact.broken.count ?? "unknown"}
        data-second-chance={impact.viaSecondChance.count ?? "unknown"}
      >
        {lines.summary}
      </p>
      {lines.unknown && (
        <p className={styles.unknown} data-testid="preview-impact-unknown">
          {lines.unknown}
        </p>
      )}
      {lines.estimate && (
        <p className="muted" data-testid="preview-impact-estimate">
          {lines.estimate}
        </p>
      )}
    </section>
  );
}

/**
 * Preview, then confirm, one proxy action. The preview says whether the server would allow it
 * (and why not), what happens in one line, and what the new table changes. Confirm is disabled
 * while the preview is stale (the pool's table version moved on since), and sends the version it
 * was computed against so the server refuses a stale confirm too. Drain and deactivate need a
 * reason, kept in the audit event, and so does any change predicted to break connections (the
 * server refuses one without).
 */
export function TransitionDialog({
  poolId,
  proxy,
  action,
  currentVersion,
  onClose,
}: {
  poolId: string;
  proxy: Proxy;
  action: ProxyAction;
  /** The pool's current table version, kept live by the page (null: none yet). */
  currentVersion: number | null;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const canOperate = useHasScope("operate");
  const [reason, setReason] = useState("");
  const transition = transitionFor(proxy.state, action);

  const preview = useQuery({
    ...trpc.proxies.preview.queryOptions({ proxyId: proxy.id, action }),
    staleTime: 0,
    gcTime: 0,
    refetchOnWindowFocus: false,
  });

  const apply = useMutation(
    trpc.proxies.transition.mutationOptions({
      onSettled: () =>
        Promise.all([
          queryClient.invalidateQueries(trpc.pools.pathFilter()),
          queryClient.invalidateQueries(trpc.fleet.pathFilter()),
          queryClient.invalidateQueries(trpc.tables.versions.pathFilter()),
          queryClient.invalidateQueries(trpc.audit.pathFilter()),
        ]),
    }),
  );

  const traffic = useQuery(trpc.pools.traffic.queryOptions({ poolId }));
  const proxyTraffic = traffic.data?.proxies.find((t) => t.proxyId === proxy.id);

  const title = `${transition?.label ?? action} ${proxy.hostname}`;
  const done = apply.data;
  const data = preview.data;
  const allowed = data?.allowed === true;
  const needsReason = reasonRequired(action, data?.impact);
  const stale =
    data && !done && !preview.isFetching ? staleReason(data.basedOnVersion, currentVersion) : null;
  const missingReason = needsReason && reason.trim() === "";
  const blocked = !canOperate
    ? "requires operate scope"
    : !data || preview.isFetching
      ? "the preview is not ready"
      : !allowed
        ? "not allowed: see above"
        : stale
          ? "the preview is stale: preview again"
          : missingReason
            ? "give a reason first"
            : null;

  return (
    <ModalDialog title={title} onClose={onClose} testId="preview-dialog">
      <div className={styles.route}>
        <span className="mono">{proxy.address}</span>
        <span data-testid="preview-from">
          <StateBadge state={data?.from ?? proxy.state} />
        </span>
        <span className={styles.arrow}>→</span>
        <span data-testid="preview-to">
          {data?.to ? <StateBadge state={data.to} /> : transition && <StateBadge state={transition.to} />}
        </span>
      </div>
      {proxy.state === "draining" && <RemainingConnections traffic={proxyTraffic} />}

      {done ? (
        <>
          <TransitionResult
            poolId={poolId}
            hostname={proxy.hostname}
            state={done.proxy.state}
            version={done.tableVersion}
          />
          <ServedBy poolId={poolId} />
        </>
      ) : preview.error ? (
        <ErrorNotice error={preview.error} testId="preview-error" />
      ) : !data ? (
        <p className="muted" aria-busy="true">
          Computing the new table…
        </p>
      ) : (
        <>
          {stale && (
            <div className={styles.stale} role="alert" data-testid="preview-stale">
              <span>{stale} Confirm would apply a change you have not seen.</span>
              <button
                type="button"
                className="small"
                data-testid="preview-again"
                onClick={() => void preview.refetch()}
              >
                Preview again
              </button>
            </div>
          )}
          {data.refusal && (
            // The reason in plain words only; the code stays in data-code for tests and support.
            <div
              className={styles.refusal}
              role="alert"
              data-testid="preview-refusal"
              data-code={data.refusal.code}
            >
              {data.refusal.message}
            </div>
          )}
          {data.diff && data.to && (
            <p className={styles.summaryLine} data-testid="preview-summary">
              {previewSummary({
                hostname: proxy.hostname,
                address: proxy.address,
                from: data.from,
                to: data.to,
                diff: data.diff,
              })}
            </p>
          )}
          {data.impact && <PreviewImpact impact={data.impact} />}
          {data.diff && <PreviewDiff diff={data.diff} />}
        </>
      )}

      {apply.error && <ErrorNotice error={apply.error} testId="transition-error" />}

      {!done && (
        <label className={styles.reason}>
          <span>
            Reason{" "}
            <span className={styles.required}>
              {needsReason ? "(required: kept in the audit log and the table version)" : "(optional)"}
            </span>
          </span>
          <input
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            maxLength={500}
            required={needsReason}
            aria-required={needsReason}
            placeholder="e.g. kernel upgrade, ticket OPS-1234"
            data-testid="transition-reason"
            disabled={apply.isPending}
          />
        </label>
      )}

      <div className={styles.footer}>
        {done ? (
          <button type="button" onClick={onClose} data-testid="close-dialog" autoFocus>
            Close
          </button>
        ) : (
          <>
            <button type="button" onClick={onClose} data-testid="cancel-transition">
              Cancel
            </button>
            <button
              type="button"
              className="primary"
              disabled={blocked !== null || apply.isPending}
              title={blocked ?? undefined}
              data-testid="confirm-transition"
              onClick={() =>
                apply.mutate({
                  proxyId: proxy.id,
                  action,
                  reason: reason.trim() || undefined,
                  expectedVersion: data?.basedOnVersion ?? null,
                })
              }
            >
              {apply.isPending ? "Applying…" : `Confirm ${transition?.label.toLowerCase() ?? action}`}
            </button>
          </>
        )}
      </div>
    </ModalDialog>
  );
}
