"use client";

import type { ComponentProps } from "react";
import type { Proxy, ProxyAction, ProxyActionOption, ProxyTraffic } from "@tide/contracts";
import Link from "next/link";
import { HealthDot } from "~/components/health-dot";
import { backendBackground } from "~/components/proxy-colors";
import { shortHost } from "~/components/short-host";
import { StateBadge } from "~/components/state-badge";
import { TimeAgo } from "~/components/time-ago";
import { ProxyActions } from "./proxy-actions";
import styles from "./proxies-table.module.css";
import { HoldNote } from "./pool-health-panel";
import { formatRate, rateCellView } from "./traffic-cell";

/**
 * The pool's proxies in slot order. Click a row, use j/k, ↑/↓, or Tab onto one of its buttons to
 * select it: the state machine diagram then shows its state and allowed transitions.
 */
export function ProxiesTable({
  proxies,
  actions,
  selectedId,
  onSelect,
  canOperate,
  onAction,
  traffic,
  holds,
}: {
  /** Live figures per proxy id (absent while loading). */
  traffic?: ReadonlyMap<string, ProxyTraffic>;
  /** Proxies held unhealthy after flapping, by id (pools.health): shown beside the health dot. */
  holds?: ReadonlyMap<string, ComponentProps<typeof HoldNote>["hold"]>;
  proxies: Proxy[];
  /** Per proxy id, the actions its state offers and whether the API allows each now. */
  actions: ReadonlyMap<string, readonly ProxyActionOption[]>;
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
          <th>Hostname</th>
          <th>State</th>
          <th>Address</th>
          <th>Health</th>
          <th
            className="num"
            title="New connections per second to this pool's VIPs (tide-redirect accepted_syn)"
          >
            New/s
          </th>
          <th className="num" title="ESTABLISHED connections to the pool's VIPs">
            Established
          </th>
          <th
            className="num"
            title="Packets per second of this pool's flows this proxy does not own, sent on to the row's next proxy (forwarded_to_alternate)"
          >
            To alternate/s
          </th>
          <th className="num" title={SECOND_CHANCE_TITLE}>
            2nd chance/s
          </th>
          <th title="Open findings of the proxy's host">Findings</th>
          <th>Since</th>
          <th className={styles.actionsColumn}>Actions</th>
        </tr>
      </thead>
      <tbody>
        {proxies.map((p) => {
          const selected = p.id === selectedId;
          return (
            <tr
              key={p.id}
              id={`proxy-${p.id}`}
              className={`${styles.row} ${selected ? styles.selected : ""}`}
              aria-selected={selected}
              data-testid="proxy-row"
              data-proxy-id={p.id}
              data-address={p.address}
              data-hostname={p.hostname}
              data-state={p.state}
              onClick={() => onSelect(p.id)}
              onFocus={() => onSelect(p.id)}
            >
              <td className={`num ${styles.slot}`}>{p.slot}</td>
              <td title={`${p.hostname} ${p.address}`}>
                <span
                  className={styles.swatch}
                  style={{ background: backendBackground(p.slot) }}
                  aria-hidden="true"
                />
                {shortHost(p.hostname)}
              </td>
              <td>
                <StateBadge state={p.state} />
              </td>
              <td className="mono">{p.address}</td>
              <td>
                <HealthDot healthy={p.health.healthy} reason={p.health.reason} />
                {holds?.get(p.id) && <HoldNote hold={holds.get(p.id)!} />}
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
              <TrafficCells t={traffic?.get(p.id)} draining={p.state === "draining"} />
              <td className="muted">
                <TimeAgo iso={p.stateChangedAt} />
              </td>
              <td className={styles.actionsColumn}>
                <ProxyActions
                  proxy={p}
                  options={actions.get(p.id) ?? []}
                  canOperate={canOperate}
                  onAction={onAction}
                  onSelect={onSelect}
                />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** What "2nd chance/s" counts (issue 26): only packets that moved or stayed because of a second chance. */
const SECOND_CHANCE_TITLE =
  "Packets per second of this pool's flows that took a second chance at this proxy: sent on to the " +
  "row's next proxy (forwarded_to_alternate) plus accepted here for a flow whose first hop was " +
  "another proxy (accepted_second_chance). Packets of flows that reached their own proxy first do " +
  "not count: 0 when no drain, fill or table change moved a flow.";

const rate = formatRate;

/** A rate cell: the figure, or "late" (never a zero) when the proxy's last reading is late. */
function RateCell({
  t,
  value,
  testId,
  title,
}: {
  t: ProxyTraffic | undefined;
  value: number | null | undefined;
  testId: string;
  title?: string;
}) {
  const v = rateCellView(t, value, title);
  return (
    <td
      className={v.late ? `num muted ${styles.late}` : "num"}
      data-testid={testId}
      data-late={v.late ? "true" : undefined}
      title={v.title}
    >
      {v.text}
      {v.hostWide && <span className="muted">*</span>}
    </td>
  );
}

/** The proxy's live figures; a draining proxy's established count says how fast it falls. */
function TrafficCells({ t, draining }: { t: ProxyTraffic | undefined; draining: boolean }) {
  const f = t?.findings;
  const stale = t?.stale ?? true;
  const alternateHash = t?.acceptedAlternateHashPerS ?? null;
  return (
    <>
      <RateCell t={t} value={t?.newConnectionsPerS} testId="traffic-new" />
      <td className="num" data-testid="traffic-established" data-value={t?.established ?? ""}>
        {t === undefined || t.established === null ? "—" : t.established.toLocaleString("en-US")}
        {draining && (t?.establishedFallingPerS ?? 0) > 0 && (
          <span className="muted"> ↓{rate(t?.establishedFallingPerS)}/s</span>
        )}
      </td>
      <RateCell t={t} value={t?.forwardedToAlternatePerS} testId="traffic-alternate" />
      <RateCell
        t={t}
        value={t?.secondChancePerS}
        testId="traffic-second-chance"
        title={
          t?.secondChancePerS === null || t?.secondChancePerS === undefined
            ? undefined
            : `${rate(t.forwardedToAlternatePerS)}/s sent on + ${rate(t.acceptedSecondChancePerS)}/s accepted for another proxy's flow` +
              (alternateHash !== null && alternateHash > 0
                ? `; ${rate(alternateHash)}/s through the old hash fields`
                : "")
        }
      />
      <td data-testid="traffic-findings" title={stale ? "no live figures from this proxy's host" : undefined}>
        {!f || f.critical + f.warn + f.info === 0 ? (
          <span className="muted">none</span>
        ) : (
          <Link href={t?.hostId ? `/hosts/${t.hostId}` : "/findings"} className={styles.findings}>
            {f.critical > 0 && <span className={styles.critical}>{f.critical} critical</span>}
            {f.warn > 0 && <span className={styles.warn}>{f.warn} warn</span>}
            {f.info > 0 && <span className="muted">{f.info} info</span>}
          </Link>
        )}
      </td>
    </>
  );
}
