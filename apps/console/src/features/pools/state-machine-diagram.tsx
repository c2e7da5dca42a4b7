"use client";

import {
  proxyTransitions,
  type ProxyAction,
  type ProxyActionOption,
  type ProxyState,
  type ProxyTransition,
} from "@tide/contracts";
import { useId, type KeyboardEvent } from "react";
import styles from "./state-machine-diagram.module.css";

const W = 110;
const H = 44;

/** Node top-left corners: the forward cycle runs clockwise. */
const nodeAt: Record<ProxyState, { x: number; y: number }> = {
  active: { x: 10, y: 20 },
  draining: { x: 260, y: 20 },
  inactive: { x: 260, y: 146 },
  filling: { x: 10, y: 146 },
};

const stateColor: Record<ProxyState, string> = {
  active: "var(--state-active)",
  draining: "var(--state-draining)",
  inactive: "var(--state-inactive)",
  filling: "var(--state-filling)",
};

/** Edge geometry per transition (from-to): a straight path and where its label sits. */
const edgeGeometry: Record<
  string,
  { d: string; lx: number; ly: number; anchor: "start" | "middle" | "end" }
> = {
  "active-draining": { d: "M120,34 L256,34", lx: 190, ly: 29, anchor: "middle" },
  "draining-active": { d: "M260,54 L124,54", lx: 190, ly: 67, anchor: "middle" },
  "draining-inactive": { d: "M315,64 L315,142", lx: 322, ly: 107, anchor: "start" },
  "inactive-filling": { d: "M260,180 L124,180", lx: 190, ly: 200, anchor: "middle" },
  "filling-inactive": { d: "M120,160 L256,160", lx: 190, ly: 155, anchor: "middle" },
  "filling-active": { d: "M65,146 L65,68", lx: 58, ly: 107, anchor: "end" },
};

/** The action's one name, as on its button ("abort drain" for abort from draining). */
function edgeLabel(t: ProxyTransition): string {
  return t.label.toLowerCase();
}

/**
 * The proxy state machine: active -> draining -> inactive -> filling -> active, with the two aborts
 * (dashed). Each node counts the pool's proxies in that state. For the selected proxy, its state is
 * outlined and the transitions the API allows it now are highlighted; they are clickable when the
 * user may operate. A transition its state offers but the pool refuses now says why in its tooltip.
 */
export function StateMachineDiagram({
  counts,
  current,
  allowed: options,
  onAction,
  proxyLabel,
}: {
  counts: Record<ProxyState, number>;
  /** The selected proxy's state, if any. */
  current: ProxyState | null;
  /** The selected proxy's actions as the API lists them (allowed now or why not). */
  allowed: readonly ProxyActionOption[];
  /** Set when the user may operate: clicking an allowed edge starts that action. */
  onAction: ((action: ProxyAction) => void) | null;
  proxyLabel: string | null;
}) {
  const uid = useId().replace(/:/g, "");
  const arrow = `arrow-${uid}`;
  const arrowAllowed = `arrow-allowed-${uid}`;

  return (
    <svg
      className={styles.svg}
      viewBox="0 0 400 212"
      role="group"
      aria-label="Proxy state machine"
      data-testid="state-machine"
      data-current={current ?? undefined}
    >
      <defs>
        <marker id={arrow} viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto">
          <path d="M0,0 L8,4 L0,8 z" className={styles.arrow} />
        </marker>
        <marker
          id={arrowAllowed}
          viewBox="0 0 8 8"
          refX="7"
          refY="4"
          markerWidth="6"
          markerHeight="6"
          orient="auto"
        >
          <path d="M0,0 L8,4 L0,8 z" className={styles.arrowAllowed} />
        </marker>
      </defs>

      {proxyTransitions.map((t) => {
        const key = `${t.from}-${t.to}`;
        const g = edgeGeometry[key];
        if (!g) return null;
        const option = current === t.from ? options.find((o) => o.action === t.action) : undefined;
        const allowed = option?.allowed === true;
        const clickable = allowed && onAction !== null;
        const start = () => onAction?.(t.action);
        const onKeyDown = (e: KeyboardEvent) => {
          if (e.key === "Enter" || e.key === " ") {
            e.preventDefault();
            start();
          }
        };
        const classes = [
          styles.edge,
          t.abort && styles.abort,
          allowed && styles.allowed,
          clickable && styles.clickable,
        ]
          .filter(Boolean)
          .join(" ");
        return (
          <g
            key={key}
            className={classes}
            data-testid={`edge-${key}`}
            data-allowed={allowed}
            {...(clickable
              ? {
                  role: "button",
                  tabIndex: 0,
                  "aria-label": `${t.label} ${proxyLabel ?? ""}: ${t.from} to ${t.to}`,
                  onClick: start,
                  onKeyDown,
                }
              : {})}
          >
            <title>
              {`${t.label}: ${t.from} → ${t.to}${option && !option.allowed ? ` (refused now: ${option.refusal?.message ?? ""})` : ""}`}
            </title>
            {clickable && <path d={g.d} className={styles.hitArea} />}
            <path d={g.d} markerEnd={`url(#${allowed ? arrowAllowed : arrow})`} />
            <text x={g.lx} y={g.ly} textAnchor={g.anchor}>
              {edgeLabel(t)}
            </text>
          </g>
        );
      })}

      {(Object.keys(nodeAt) as ProxyState[]).map((state) => {
        const { x, y } = nodeAt[state];
        return (
          <g
            key={state}
            className={`${styles.node} ${current === state ? styles.current : ""}`}
            data-testid={`node-${state}`}
            data-count={counts[state]}
          >
            <rect x={x} y={y} width={W} height={H} rx={5} />
            <text x={x + 10} y={y + 18} className={styles.nodeName} fill={stateColor[state]}>
              {state}
            </text>
            <text x={x + 10} y={y + 34} className={styles.nodeCount}>
              {counts[state]} {counts[state] === 1 ? "proxy" : "proxies"}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
