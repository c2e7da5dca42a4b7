"use client";

import type { Proxy, ProxyAction, ProxyActionOption } from "@tide/contracts";
import { shortHost } from "~/components/short-host";
import styles from "./proxies-table.module.css";

/** Keyboard shortcut per action (on the selected proxy row). */
export const actionKeys: Record<ProxyAction, string> = {
  drain: "d",
  deactivate: "x",
  fill: "f",
  activate: "a",
  abort: "z",
};

/** Why a button is disabled, in a tooltip's words (the API's own message when it would refuse). */
export function disabledReason(option: ProxyActionOption, canOperate: boolean): string | null {
  if (!canOperate) return "requires operate scope";
  if (!option.allowed) return option.refusal?.message ?? "not allowed now";
  return null;
}

/**
 * One button per action the proxy's state offers (as the API lists them on the pool). An action
 * the API would refuse now is disabled, and says why under the button: the proxy whose change in
 * progress blocks it (a link that selects its row), or the rule it would break.
 */
export function ProxyActions({
  proxy,
  options,
  canOperate,
  onAction,
  onSelect,
}: {
  proxy: Proxy;
  options: readonly ProxyActionOption[];
  canOperate: boolean;
  onAction: (proxy: Proxy, action: ProxyAction) => void;
  onSelect: (id: string) => void;
}) {
  const refused = canOperate ? options.find((o) => !o.allowed) : undefined;
  const blocking = refused?.refusal?.blockingProxyId ?? null;
  return (
    <div className={styles.actionCell}>
      <span className={styles.actions}>
        {options.map((o) => {
          const why = disabledReason(o, canOperate);
          return (
            <button
              key={o.action}
              type="button"
              className={`small ${o.abort ? "" : "primary"}`}
              disabled={why !== null}
              title={why ?? `${o.label}: ${o.from} → ${o.to} (key ${actionKeys[o.action]})`}
              aria-describedby={refused === o ? `refusal-${proxy.id}` : undefined}
              data-testid={`action-${o.action}`}
              data-proxy-id={proxy.id}
              data-allowed={o.allowed}
              onClick={(e) => {
                e.stopPropagation();
                onAction(proxy, o.action);
              }}
            >
              {o.label}
            </button>
          );
        })}
      </span>
      {refused && (
        <span className={styles.refusal} id={`refusal-${proxy.id}`} data-testid="action-refusal">
          {blocking ? (
            <>
              waits for{" "}
              <a
                href={`#proxy-${blocking}`}
                data-testid="blocking-proxy"
                title={refused.refusal?.message}
                // Tab onto the link selects its row (as for any action); a click selects the other
                // proxy, so it must not focus the link first: that row selection could land after it.
                onMouseDown={(e) => e.preventDefault()}
                onClick={(e) => {
                  e.stopPropagation();
                  onSelect(blocking);
                }}
              >
                {shortHost(refused.refusal?.blockingHostname ?? blocking)}
              </a>
            </>
          ) : (
            <span title={refused.refusal?.message}>
              {refused.refusal?.code === "invariant_violation"
                ? "would leave too few in rotation"
                : "refused"}
            </span>
          )}
        </span>
      )}
    </div>
  );
}
