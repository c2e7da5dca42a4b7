import {
  allowedTransitions,
  isEligible,
  TideError,
  transitionFor,
  type PoolChangeInProgress,
  type ProxyAction,
  type ProxyActionOption,
  type ProxyState,
  type ProxyTransition,
} from "@tide/contracts";

export interface PlannedProxy {
  id: string;
  address: string;
  hostname: string;
  state: ProxyState;
}

/**
 * Whether a director serves the pool. The invariants protect traffic: a pool no director serves
 * receives no packet through Tide, so its proxies may all drain, and be deactivated, to zero.
 */
export interface PoolServing {
  served: boolean;
}

const SERVED: PoolServing = { served: true };

export type Plan<P extends PlannedProxy> =
  | { ok: true; transition: ProxyTransition; from: ProxyState; to: ProxyState; next: P[] }
  | { ok: false; error: TideError };

function describe(p: PlannedProxy): string {
  return `${p.id} (${p.hostname}, ${p.address})`;
}

/**
 * Check the invariants a pool must keep after a change (pure; the service runs this inside the
 * transaction that holds the pool's row lock, so concurrent requests are serialised):
 *  1. at most one proxy of the pool is not active;
 *  2. a pool with at least 2 proxies keeps at least 2 eligible (active or filling) — a change may
 *     not take it below 2 (a pool that is already below, e.g. while its second proxy is added,
 *     may only move towards 2).
 * Neither applies to a pool no director serves (`serving.served` false).
 */
export function checkPoolInvariants(
  before: readonly PlannedProxy[],
  after: readonly PlannedProxy[],
  changedId: string | null,
  serving: PoolServing = SERVED,
): TideError | null {
  if (!serving.served) return null;
  const notActive = after.filter((p) => p.state !== "active");
  if (notActive.length > 1) {
    const others = notActive.filter((p) => p.id !== changedId);
    const blocking = others[0] ?? notActive[0]!;
    return new TideError(
      "conflict",
      `Another proxy of this pool is ${blocking.state}: ${describe(blocking)}. ` +
        `A pool that directors serve may have only one proxy that is not active; finish or abort ` +
        `that change first (or unassign the pool's directors, if it is being taken out of service).`,
      { blockingProxyId: blocking.id, blockingHostname: blocking.hostname, blockingState: blocking.state },
    );
  }
  const eligibleBefore = before.filter((p) => isEligible(p.state)).length;
  const eligibleAfter = after.filter((p) => isEligible(p.state)).length;
  if (after.length >= 2 && eligibleAfter < 2 && eligibleAfter < eligibleBefore) {
    return new TideError(
      "invariant_violation",
      `This would leave ${eligibleAfter} eligible (active or filling) prox${eligibleAfter === 1 ? "y" : "ies"} ` +
        `in a pool of ${after.length}; a pool with 2 or more proxies must keep at least 2 while directors serve it. ` +
        `Add or fill another proxy first (or unassign the pool's directors, if it is being taken out of service).`,
      { eligibleBefore, eligibleAfter },
    );
  }
  return null;
}

/**
 * Plan one proxy action: the state machine plus the pool invariants. Pure. An older spelling of
 * an abort (activate on a draining proxy) plans as `abort`: `transition.action` is the name to record.
 */
export function planTransition<P extends PlannedProxy>(
  proxies: readonly P[],
  proxyId: string,
  action: ProxyAction,
  serving: PoolServing = SERVED,
): Plan<P> {
  const proxy = proxies.find((p) => p.id === proxyId);
  if (!proxy) return { ok: false, error: new TideError("not_found", `Proxy ${proxyId} does not exist.`) };
  const t = transitionFor(proxy.state, action);
  if (!t) {
    const allowed = allowedTransitions(proxy.state)
      .map((x) => `${x.action} (${x.label.toLowerCase()}, -> ${x.to})`)
      .join(", ");
    return {
      ok: false,
      error: new TideError(
        "invalid_transition",
        `Cannot ${action} ${describe(proxy)}: it is ${proxy.state}. Allowed from ${proxy.state}: ${allowed}.`,
        { state: proxy.state, action },
      ),
    };
  }
  const next = proxies.map((p) => (p.id === proxyId ? { ...p, state: t.to } : p));
  const violation = checkPoolInvariants(proxies, next, proxyId, serving);
  if (violation) return { ok: false, error: violation };
  return { ok: true, transition: t, from: t.from, to: t.to, next };
}

/**
 * Every action each proxy's state offers, and whether the pool's invariants allow it now: the
 * exact check the action itself makes (planTransition), so the console disables a button for the
 * reason the API would refuse with. Pure.
 */
export function planProxyActions(
  proxies: readonly PlannedProxy[],
  serving: PoolServing = SERVED,
): ProxyActionOption[] {
  return proxies.flatMap((p) =>
    allowedTransitions(p.state).map((t) => {
      const plan = planTransition(proxies, p.id, t.action, serving);
      const details = plan.ok ? undefined : plan.error.details;
      const blockingId = typeof details?.blockingProxyId === "string" ? details.blockingProxyId : null;
      return {
        proxyId: p.id,
        action: t.action,
        label: t.label,
        from: t.from,
        to: t.to,
        abort: t.abort,
        allowed: plan.ok,
        refusal: plan.ok
          ? null
          : {
              code: plan.error.code,
              message: plan.error.message,
              blockingProxyId: blockingId,
              blockingHostname: proxies.find((b) => b.id === blockingId)?.hostname ?? null,
            },
      };
    }),
  );
}

/** The pool's proxy that is not active, if any (the invariants allow at most one). Pure. */
export function changeInProgress(
  proxies: readonly (PlannedProxy & { stateChangedAt: Date })[],
): PoolChangeInProgress | null {
  const p = proxies.find((x) => x.state !== "active");
  return p
    ? { proxyId: p.id, hostname: p.hostname, state: p.state, since: p.stateChangedAt.toISOString() }
    : null;
}
