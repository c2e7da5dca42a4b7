"use client";

import type { Proxy, ProxyAction } from "@tide/contracts";
import { HealthDot } from "~/components/health-dot";
import { backendColor } from "~/components/proxy-colors";
import { StateBadge } from "~/components/state-badge";
import { TimeAgo } from "~/components/time-ago";
import { ProxyActions } from "./proxy-actions";
import styles from "./proxies-table.module.css";

/**
 * The pool's proxies in slot order. Click a row (or use j/k, ↑/↓) to select it: the state machine
 * diagram then shows its state and allowed transitions.
 */
export function ProxiesTable({
  proxies,
  selectedId,
  onSelect,
  canOperate,
  onAction,
}: {
  proxies: Proxy[];
  selectedId: string | null;
  onSelect: (id: string) => void;
  canOperate: boolean;
  onAction: (proxy: Proxy, action: ProxyAction) => void;
}) {
  return (
    <table className="data" data-testid="proxies-table" aria-label="Proxies">
      <thead>
        <tr>
          <th className="num">Slot</th>
          <th>Address</th>
          <th>Hostname</th>
          <th>State</th>
          <th>Health</th>
          <th>Since</th>
          <th>Actions</th>
        </tr>
      </thead>
      <tbody>
        {proxies.map((p) => {
          const selected = p.id === selectedId;
          return (
            <tr
              key={p.id}
              className={`${styles.row} ${selected ? styles.selected : ""}`}
              aria-selected={selected}
              data-testid="proxy-row"
              data-proxy-id={p.id}
              data-address={p.address}
              data-hostname={p.hostname}
              data-state={p.state}
              onClick={() => onSelect(p.id)}
            >
              <td className={`num ${styles.slot}`}>{p.slot}</td>
              <td className="mono">
                <span
                  className={styles.swatch}
                  style={{ background: backendColor(p.slot) }}
                  aria-hidden="true"
                />
                {p.address}
              </td>
              <td>{p.hostname}</td>
              <td>
                <StateBadge state={p.state} />
              </td>
              <td>
                <HealthDot healthy={p.health.healthy} reason={p.health.reason} />
                {p.health.pinned !== null && (
                  <span
                    className={`muted ${styles.pinned}`}
                    data-testid="health-pinned"
                    title="An operator pinned this proxy's health: the directors' checks do not change it"
                  >
                    {" "}
                    · pinned
                  </span>
                )}
                {!p.health.healthy && p.health.reason !== "" && (
                  <div className={`muted ${styles.healthReason}`} data-testid="health-reason">
                    {p.health.reason}
                  </div>
                )}
              </td>
              <td className="muted">
                <TimeAgo iso={p.stateChangedAt} />
              </td>
              <td>
                <ProxyActions proxy={p} canOperate={canOperate} onAction={onAction} />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
