"use client";

import type { PoolChangeInProgress, ProxyAction, ProxyActionOption } from "@tide/contracts";
import { StateBadge } from "~/components/state-badge";
import { formatDuration } from "./duration";
import styles from "./pool-view.module.css";
import { useNow } from "./use-now";
import { disabledReason } from "./proxy-actions";

/**
 * The pool's change in progress, above everything: "proxy-www-03 draining for 57 s — Deactivate /
 * Abort drain". Other proxies' actions wait until it is active again (one change at a time).
 */
export function ChangeBanner({
  change,
  options,
  canOperate,
  onAction,
  onSelect,
}: {
  change: PoolChangeInProgress;
  options: readonly ProxyActionOption[];
  canOperate: boolean;
  onAction: (proxyId: string, action: ProxyAction) => void;
  onSelect: (proxyId: string) => void;
}) {
  const now = useNow();
  return (
    <section
      className={styles.banner}
      // A region, not a live one: its duration ticks every second and must not be read out each time.
      role="region"
      aria-label="Change in progress"
      data-testid="change-banner"
      data-proxy-id={change.proxyId}
      data-state={change.state}
    >
      <span className={styles.bannerText}>
        <a
          href={`#proxy-${change.proxyId}`}
          onClick={() => onSelect(change.proxyId)}
          data-testid="change-proxy"
        >
          {change.hostname}
        </a>{" "}
        <StateBadge state={change.state} />
        {now !== null && (
          <span data-testid="change-duration"> for {formatDuration(now - Date.parse(change.since))}</span>
        )}
      </span>
      {options.length > 0 && (
        <span className={styles.bannerActions}>
          {options.map((o) => {
            const why = disabledReason(o, canOperate);
            return (
              <button
                key={o.action}
                type="button"
                className={`small ${o.abort ? "" : "primary"}`}
                disabled={why !== null}
                title={why ?? `${o.label}: ${o.from} → ${o.to}`}
                data-testid={`banner-${o.action}`}
                onClick={() => onAction(change.proxyId, o.action)}
              >
                {o.label}
              </button>
            );
          })}
        </span>
      )}
      <span className={`muted ${styles.bannerNote}`}>
        Other proxies wait until it is active again (or removed): a pool changes one proxy at a time.
      </span>
    </section>
  );
}
