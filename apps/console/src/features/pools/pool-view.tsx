"use client";

import type { Proxy, ProxyAction, ProxyActionOption, ProxyState } from "@tide/contracts";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useCallback, useMemo, useState } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { TimeAgo } from "~/components/time-ago";
import { usePageKeys } from "~/components/use-page-keys";
import { PoolAdminBar } from "~/features/pool-admin/pool-admin-bar";
import { useHasScope } from "~/features/session/session-context";
import { ServedBy } from "~/features/sync/served-by";
import { useTRPC } from "~/trpc/react";
import { ChangeBanner } from "./change-banner";
import { HashMigrationBanner } from "./hash-migration-banner";
import { PoolFacts } from "./pool-facts";
import { PoolHealthPanel } from "./pool-health-panel";
import { ProxiesTable } from "./proxies-table";
import { actionKeys } from "./proxy-actions";
import styles from "./pool-view.module.css";
import { StateMachineDiagram } from "./state-machine-diagram";
import { TransitionDialog } from "./transition-dialog";
import { usePoolLive } from "./use-pool-live";

interface PendingAction {
  proxy: Proxy;
  action: ProxyAction;
}

/** One pool: facts, proxies with their actions, and the state machine for the selected proxy. */
export function PoolView({ poolId }: { poolId: string }) {
  const trpc = useTRPC();
  const canOperate = useHasScope("operate");
  // Pushed: re-read when the pool changes (usePoolLive); the slow poll is the fallback.
  const pool = useQuery({ ...trpc.pools.get.queryOptions({ poolId }), refetchInterval: 30_000 });
  const live = usePoolLive(poolId);
  // Pushed after each proxy host's batch (usePoolLive); the slow poll is the fallback.
  const traffic = useQuery({ ...trpc.pools.traffic.queryOptions({ poolId }), refetchInterval: 30_000 });
  const trafficById = useMemo(
    () => new Map((traffic.data?.proxies ?? []).map((t) => [t.proxyId, t])),
    [traffic.data],
  );
  // The health panel's own query (same key): which proxies are held after flapping, and until when.
  const health = useQuery(trpc.pools.health.queryOptions({ poolId }));
  const holds = useMemo(
    () => new Map((health.data?.proxies ?? []).filter((x) => x.held).map((x) => [x.proxyId, x])),
    [health.data],
  );
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [pending, setPending] = useState<PendingAction | null>(null);

  const proxies = useMemo(() => pool.data?.proxies ?? [], [pool.data]);
  const selected = proxies.find((p) => p.id === selectedId) ?? null;
  // What the API would allow now, per proxy: buttons, keys and diagram edges all follow it.
  const actionsById = useMemo(() => {
    const byId = new Map<string, ProxyActionOption[]>();
    for (const o of pool.data?.actions ?? []) byId.set(o.proxyId, [...(byId.get(o.proxyId) ?? []), o]);
    return byId;
  }, [pool.data]);

  const start = useCallback(
    (proxy: Proxy, action: ProxyAction) => {
      const option = actionsById.get(proxy.id)?.find((o) => o.action === action);
      if (!canOperate || !option?.allowed) return;
      setSelectedId(proxy.id);
      setPending({ proxy, action });
    },
    [canOperate, actionsById],
  );

  const onKey = useCallback(
    (key: string): boolean => {
      if (proxies.length === 0) return false;
      const index = proxies.findIndex((p) => p.id === selectedId);
      if (key === "j" || key === "ArrowDown") {
        setSelectedId(proxies[Math.min(proxies.length - 1, index + 1)]?.id ?? null);
        return true;
      }
      if (key === "k" || key === "ArrowUp") {
        setSelectedId(proxies[Math.max(0, index - 1)]?.id ?? null);
        return true;
      }
      if (key === "Escape") {
        setSelectedId(null);
        return true;
      }
      const action = (Object.keys(actionKeys) as ProxyAction[]).find((a) => actionKeys[a] === key);
      if (action && selected && actionsById.get(selected.id)?.some((o) => o.action === action && o.allowed)) {
        start(selected, action);
        return true;
      }
      return false;
    },
    [proxies, selectedId, selected, start, actionsById],
  );
  usePageKeys(onKey, pending === null);

  if (pool.error) return <ErrorNotice error={pool.error} />;
  if (!pool.data) return <p className="muted">Loading pool…</p>;
  const p = pool.data;
  const counts: Record<ProxyState, number> = {
    active: p.proxyCounts.active,
    draining: p.proxyCounts.draining,
    inactive: p.proxyCounts.inactive,
    filling: p.proxyCounts.filling,
  };

  return (
    <div className={styles.page}>
      <div className={styles.title}>
        <h1 data-testid="pool-name">{p.name}</h1>
        <span className="muted">{p.description}</span>
        <nav className={styles.links} aria-label="Pool">
          <Link href={`/pools/${p.id}/table`}>Forwarding table</Link>
          <Link href={`/pools/${p.id}/versions`}>Versions</Link>
          <Link href={`/audit?pool=${p.id}`}>Audit</Link>
        </nav>
        <PoolAdminBar poolId={p.id} poolName={p.name} />
        <span className="muted" data-testid="pool-live" data-state={live}>
          {live === "live" ? "● live" : live === "offline" ? "○ reconnecting" : "○ connecting"}
          {pool.dataUpdatedAt > 0 && (
            <>
              {" "}
              · updated{" "}
              <TimeAgo iso={new Date(Math.max(pool.dataUpdatedAt, traffic.dataUpdatedAt)).toISOString()} />
            </>
          )}
        </span>
      </div>
      {p.changeInProgress && (
        <ChangeBanner
          change={p.changeInProgress}
          options={actionsById.get(p.changeInProgress.proxyId) ?? []}
          canOperate={canOperate}
          onSelect={setSelectedId}
          onAction={(proxyId, action) => {
            const proxy = p.proxies.find((x) => x.id === proxyId);
            if (proxy) start(proxy, action);
          }}
        />
      )}
      {p.hashMigration && <HashMigrationBanner poolId={p.id} migration={p.hashMigration} />}
      <section className="panel">
        <div className="body">
          <PoolFacts pool={p} />
          <ServedBy poolId={p.id} />
        </div>
      </section>
      <div className={styles.grid}>
        <section className="panel" aria-labelledby="proxies-heading">
          <header>
            <h2 id="proxies-heading">Proxies</h2>
            <span className="muted">{p.proxies.length}</span>
          </header>
          {/* Focusable so the keyboard can scroll it sideways on a narrow screen. */}
          <div className={styles.tableScroll} tabIndex={0} role="region" aria-labelledby="proxies-heading">
            <ProxiesTable
              proxies={p.proxies}
              actions={actionsById}
              selectedId={selectedId}
              onSelect={setSelectedId}
              canOperate={canOperate}
              onAction={start}
              traffic={trafficById}
              holds={holds}
            />
          </div>
          <div className={styles.hint}>
            j/k or ↑/↓ select · {actionKeys.drain} drain · {actionKeys.deactivate} deactivate ·{" "}
            {actionKeys.fill} fill · {actionKeys.activate} activate · {actionKeys.abort} abort drain or fill
          </div>
        </section>
        <section className="panel" aria-labelledby="sm-heading">
          <header>
            <h2 id="sm-heading">State machine</h2>
            <span className="muted">{selected ? selected.hostname : "select a proxy"}</span>
          </header>
          <div className="body">
            <StateMachineDiagram
              counts={counts}
              current={selected?.state ?? null}
              proxyLabel={selected?.hostname ?? null}
              allowed={selected ? (actionsById.get(selected.id) ?? []) : []}
              onAction={selected && canOperate ? (action) => start(selected, action) : null}
            />
          </div>
        </section>
      </div>
      <PoolHealthPanel poolId={p.id} canOperate={canOperate} />
      {pending && (
        <TransitionDialog
          key={`${pending.proxy.id}-${pending.action}`}
          poolId={p.id}
          proxy={pending.proxy}
          action={pending.action}
          currentVersion={p.currentVersion?.version ?? null}
          onClose={() => setPending(null)}
        />
      )}
    </div>
  );
}
