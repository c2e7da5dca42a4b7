import { z } from "zod";
import type { ProxyState } from "./fleet";

/**
 * The proxy state machine. The forward cycle is active -> draining -> inactive -> filling -> active;
 * draining -> active and filling -> inactive are aborts. A new proxy starts inactive and only an
 * inactive proxy can be removed.
 */
export const ProxyAction = z
  .enum(["drain", "deactivate", "fill", "activate"])
  .describe(
    "drain: active->draining; deactivate: draining->inactive or abort a fill (filling->inactive); " +
      "fill: inactive->filling; activate: filling->active or abort a drain (draining->active)",
  );
export type ProxyAction = z.infer<typeof ProxyAction>;

export interface ProxyTransition {
  action: ProxyAction;
  from: ProxyState;
  to: ProxyState;
  abort: boolean;
  label: string;
}

export const proxyTransitions: readonly ProxyTransition[] = [
  { action: "drain", from: "active", to: "draining", abort: false, label: "Drain" },
  { action: "deactivate", from: "draining", to: "inactive", abort: false, label: "Set inactive" },
  { action: "fill", from: "inactive", to: "filling", abort: false, label: "Fill" },
  { action: "activate", from: "filling", to: "active", abort: false, label: "Activate" },
  { action: "activate", from: "draining", to: "active", abort: true, label: "Abort drain" },
  { action: "deactivate", from: "filling", to: "inactive", abort: true, label: "Abort fill" },
];

/** The transition an action makes from a state, or undefined if the action is not allowed there. */
export function transitionFor(from: ProxyState, action: ProxyAction): ProxyTransition | undefined {
  return proxyTransitions.find((t) => t.from === from && t.action === action);
}

export function allowedTransitions(from: ProxyState): ProxyTransition[] {
  return proxyTransitions.filter((t) => t.from === from);
}

/** Eligible proxies count towards the "keep at least 2" invariant: they are in the table's rotation. */
export function isEligible(state: ProxyState): boolean {
  return state === "active" || state === "filling";
}
