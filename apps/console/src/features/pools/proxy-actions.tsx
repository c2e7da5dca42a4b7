"use client";

import { allowedTransitions, type Proxy, type ProxyAction } from "@tide/contracts";
import styles from "./proxies-table.module.css";

/** Keyboard shortcut per action (on the selected proxy row). */
export const actionKeys: Record<ProxyAction, string> = {
  drain: "d",
  deactivate: "x",
  fill: "f",
  activate: "a",
  abort: "z",
};

/** One button per transition the proxy's state allows. Disabled without the operate scope. */
export function ProxyActions({
  proxy,
  canOperate,
  onAction,
}: {
  proxy: Proxy;
  canOperate: boolean;
  onAction: (proxy: Proxy, action: ProxyAction) => void;
}) {
  return (
    <span className={styles.actions}>
      {allowedTransitions(proxy.state).map((t) => (
        <button
          key={t.action}
          type="button"
          className={`small ${t.abort ? "" : "primary"}`}
          disabled={!canOperate}
          title={
            canOperate
              ? `${t.label}: ${t.from} → ${t.to} (key ${actionKeys[t.action]})`
              : "requires operate scope"
          }
          data-testid={`action-${t.action}`}
          data-proxy-id={proxy.id}
          onClick={(e) => {
            e.stopPropagation();
            onAction(proxy, t.action);
          }}
        >
          {t.label}
        </button>
      ))}
    </span>
  );
}
