"use client";

import {
  FLAP_WINDOW_MS,
  type HealthCheckOutcome,
  type PoolHealth,
  type PoolHealthCheck,
} from "@tide/contracts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { FormError } from "~/components/form-error";
import { HealthDot } from "~/components/health-dot";
import { formatUtc, TimeAgo } from "~/components/time-ago";
import { useTRPC } from "~/trpc/react";
import { formatDuration } from "./duration";
import styles from "./pool-health.module.css";
import { useNow } from "./use-now";

/** "GUE + HTTP :80 /health (200) every 2 s, timeout 1 s, up after 3, down after 3". */
export function describeHealthCheck(c: PoolHealthCheck): string {
  if (!c.enabled) return "Health checks off: the directors do not check this pool's proxies.";
  const parts = [
    ...(c.gue ? ["GUE path"] : []),
    ...(c.service?.kind === "http"
      ? [`HTTP :${c.service.port} ${c.service.path} (${c.service.expectStatus})`]
      : c.service?.kind === "tcp"
        ? [`TCP :${c.service.port}`]
        : []),
  ];
  return (
    `${parts.join(" + ")} every ${c.intervalMs / 1000} s, timeout ${c.timeoutMs / 1000} s, ` +
    `up after ${c.rise} passing, down after ${c.fall} failing rounds`
  );
}

function Check({ c }: { c: HealthCheckOutcome }) {
  const ms = c.latencyUs === null ? "" : ` ${(c.latencyUs / 1000).toFixed(c.latencyUs < 10_000 ? 1 : 0)} ms`;
  return (
    <span
      className={c.ok ? styles.ok : styles.fail}
      data-testid="health-check"
      data-kind={c.kind}
      data-ok={c.ok}
    >
      {c.ok ? "✓" : "✗"} {c.kind}
      {c.ok ? ms : `: ${c.detail}`}
    </span>
  );
}

type ProxyHealthRow = PoolHealth["proxies"][number];

/** "flapped once in the last 10 min", "flapped 3 times in the last 10 min". */
export function flappedWords(recentFlips: number): string {
  return `${recentFlips === 1 ? "flapped once" : `flapped ${recentFlips} times`} in the last ${formatDuration(FLAP_WINDOW_MS)}`;
}

/**
 * A recovery hold beside "unhealthy": " — held until 14:03:12Z (flapped 3 times in the last 10 min)",
 * then "back in 37 s if its checks keep passing", counting down each second. Exported for every
 * place that shows a proxy's health (the proxies table too), so they say the same.
 */
export function HoldNote({
  hold,
}: {
  hold: Pick<ProxyHealthRow, "heldUntil" | "recentFlips" | "holdReason">;
}) {
  const now = useNow();
  if (hold.heldUntil === null) return null;
  const left = now === null ? null : Date.parse(hold.heldUntil) - now;
  return (
    <span className={styles.hold} title={hold.holdReason ?? undefined} data-testid="health-hold">
      <span data-testid="held-until">
        {" "}
        — held until <time dateTime={hold.heldUntil}>{formatUtc(hold.heldUntil).slice(11)}</time> (
        {flappedWords(hold.recentFlips)})
      </span>
      {left !== null && (
        <span className={`muted ${styles.countdown}`} data-testid="hold-countdown">
          {left > 0 ? `back in ${formatDuration(left + 999)} if its checks keep passing` : "releasing…"}
        </span>
      )}
    </span>
  );
}

/** "checks pass on 2 of 2 directors": the fresh verdicts behind a hold. */
function passingOn(views: ProxyHealthRow["views"]): string {
  const counted = views.filter((v) => !v.stale && v.up !== null);
  return `checks pass on ${counted.filter((v) => v.up).length} of ${counted.length} directors`;
}

/** Pin health over the checks (operate scope), with the reason the audit log keeps. */
function PinControls({ poolId, proxy }: { poolId: string; proxy: ProxyHealthRow }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [reason, setReason] = useState("");
  const pin = useMutation(
    trpc.proxies.setHealthPin.mutationOptions({
      onSuccess: async () => {
        setReason("");
        await Promise.all([
          queryClient.invalidateQueries({ queryKey: trpc.pools.health.queryKey({ poolId }) }),
          queryClient.invalidateQueries({ queryKey: trpc.pools.get.queryKey({ poolId }) }),
        ]);
      },
    }),
  );
  const go = (pinned: boolean | null) =>
    pin.mutate({ proxyId: proxy.proxyId, pinned, reason: reason.trim() });
  const noReason = reason.trim() === "";
  return (
    <div className={styles.pin}>
      <input
        value={reason}
        onChange={(e) => setReason(e.target.value)}
        placeholder="reason (audited)"
        aria-label={`Reason to pin ${proxy.hostname}`}
        data-testid="pin-reason"
      />
      {proxy.pinned === null ? (
        <>
          <button
            type="button"
            disabled={noReason || pin.isPending}
            onClick={() => go(false)}
            data-testid="pin-unhealthy"
          >
            Pin unhealthy
          </button>
          <button
            type="button"
            disabled={noReason || pin.isPending}
            onClick={() => go(true)}
            data-testid="pin-healthy"
          >
            Pin healthy
          </button>
        </>
      ) : (
        <button
          type="button"
          disabled={noReason || pin.isPending}
          onClick={() => go(null)}
          data-testid="unpin"
        >
          Unpin (checks decide)
        </button>
      )}
      <FormError error={pin.error} />
    </div>
  );
}

/**
 * Health checks of the pool: how the directors check, whether the pool fails open, and per proxy
 * its health with every serving director's view (each check's last outcome and latency).
 */
export function PoolHealthPanel({ poolId, canOperate }: { poolId: string; canOperate: boolean }) {
  const trpc = useTRPC();
  const health = useQuery({ ...trpc.pools.health.queryOptions({ poolId }), refetchInterval: 30_000 });
  // Re-read when the first hold ends: the release is pushed too, but a page must not keep saying
  // "held" past the time it gave if that push is lost.
  const nextRelease = health.data?.proxies
    .map((p) => (p.heldUntil === null ? Infinity : Date.parse(p.heldUntil)))
    .reduce((a, b) => Math.min(a, b), Infinity);
  const { refetch } = health;
  useEffect(() => {
    if (nextRelease === undefined || !Number.isFinite(nextRelease)) return;
    const timer = setTimeout(() => void refetch(), Math.max(0, nextRelease - Date.now()) + 1_500);
    return () => clearTimeout(timer);
  }, [nextRelease, refetch]);
  if (health.error) return <ErrorNotice error={health.error} />;
  if (!health.data) return <p className="muted">Loading health…</p>;
  const h = health.data;
  return (
    <section className="panel" aria-labelledby="health-heading" data-testid="pool-health">
      <header>
        <h2 id="health-heading">Health checks</h2>
        <span className="muted" data-testid="health-check-config">
          {describeHealthCheck(h.check)}
        </span>
      </header>
      <div className="body">
        {h.failOpen && (
          <p className={styles.failOpen} role="alert" data-testid="fail-open">
            Every proxy in rotation is unhealthy: the pool fails open and its table serves them all as if
            healthy. Check the directors&apos; views below.
          </p>
        )}
        <div className={styles.tableScroll}>
          <table className="data" aria-label="Proxy health">
            <thead>
              <tr>
                <th>Proxy</th>
                <th>Health</th>
                <th>Directors&apos; views</th>
                {canOperate && <th>Pin</th>}
              </tr>
            </thead>
            <tbody>
              {h.proxies.map((p) => (
                <tr
                  key={p.proxyId}
                  data-testid="proxy-health-row"
                  data-hostname={p.hostname}
                  data-healthy={p.healthy}
                  data-held={p.held}
                >
                  <td>{p.hostname}</td>
                  <td>
                    <HealthDot healthy={p.healthy} reason={p.holdReason ?? p.reason} />
                    {p.pinned !== null && <span className="muted"> · pinned</span>}
                    {p.held && (
                      <>
                        <HoldNote hold={p} />
                        <div className="muted" data-testid="hold-passing">
                          {passingOn(p.views)}, held after flapping
                        </div>
                      </>
                    )}
                    <div className="muted">
                      since <TimeAgo iso={p.changedAt} />
                    </div>
                  </td>
                  <td>
                    {p.views.length === 0 ? (
                      <span className="muted">no director has reported</span>
                    ) : (
                      <ul className={styles.views}>
                        {p.views.map((v) => (
                          <li
                            key={v.director}
                            data-testid="director-view"
                            data-director={v.director}
                            data-up={String(v.up)}
                          >
                            <strong>{v.director}</strong>{" "}
                            <span className={v.up === false ? styles.fail : v.up ? styles.ok : "muted"}>
                              {v.up === null ? "checking" : v.up ? "up" : "down"}
                            </span>
                            {v.stale && <span className="muted"> (stale: not counted)</span>}{" "}
                            {v.checks.map((c) => (
                              <Check key={c.kind} c={c} />
                            ))}
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                  {canOperate && (
                    <td>
                      <PinControls poolId={poolId} proxy={p} />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
    </section>
  );
}
