"use client";

import { transitionFor, type Proxy, type ProxyAction } from "@tide/contracts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { ModalDialog } from "~/components/modal-dialog";
import { StateBadge } from "~/components/state-badge";
import { TableDiffView } from "~/features/diff/table-diff-view";
import { useHasScope } from "~/features/session/session-context";
import { ServedBy } from "~/features/sync/served-by";
import { useTRPC } from "~/trpc/react";
import styles from "./transition-dialog.module.css";
import { RemainingConnections } from "./remaining-connections";
import { TransitionResult } from "./transition-result";

/**
 * Preview, then confirm, one proxy action. The preview says whether the server would allow it
 * (and why not) and what the new table changes; Confirm applies it and reports the new version.
 */
export function TransitionDialog({
  poolId,
  proxy,
  action,
  onClose,
}: {
  poolId: string;
  proxy: Proxy;
  action: ProxyAction;
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
  const allowed = preview.data?.allowed === true;

  return (
    <ModalDialog title={title} onClose={onClose} testId="preview-dialog">
      <div className={styles.route}>
        <span className="mono">{proxy.address}</span>
        <span data-testid="preview-from">
          <StateBadge state={preview.data?.from ?? proxy.state} />
        </span>
        <span className={styles.arrow}>→</span>
        <span data-testid="preview-to">
          {preview.data?.to ? (
            <StateBadge state={preview.data.to} />
          ) : (
            transition && <StateBadge state={transition.to} />
          )}
        </span>
        {transition?.abort && <span className="muted">(abort)</span>}
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
      ) : !preview.data ? (
        <p className="muted" aria-busy="true">
          Computing the new table…
        </p>
      ) : (
        <>
          {preview.data.refusal && (
            <div className={styles.refusal} role="alert" data-testid="preview-refusal">
              <span className={styles.refusalCode}>{preview.data.refusal.code}</span>{" "}
              {preview.data.refusal.message}
            </div>
          )}
          {preview.data.diff && <TableDiffView diff={preview.data.diff} />}
        </>
      )}

      {apply.error && <ErrorNotice error={apply.error} testId="transition-error" />}

      {!done && (
        <label className={styles.reason}>
          Reason (kept in the audit log and the table version)
          <input
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            maxLength={500}
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
              disabled={!allowed || !canOperate || apply.isPending}
              title={!canOperate ? "requires operate scope" : !allowed ? "not allowed: see above" : undefined}
              data-testid="confirm-transition"
              onClick={() => apply.mutate({ proxyId: proxy.id, action, reason: reason.trim() || undefined })}
            >
              {apply.isPending ? "Applying…" : `Confirm ${transition?.label.toLowerCase() ?? action}`}
            </button>
          </>
        )}
      </div>
    </ModalDialog>
  );
}
