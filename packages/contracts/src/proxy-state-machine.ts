import { z } from "zod";

/**
 * The proxy state machine. The forward cycle is active -> draining -> inactive -> filling -> active;
 * `abort` undoes the change in progress (draining -> active, filling -> inactive). A new proxy
 * starts inactive and only an inactive proxy can be removed. One name per action everywhere: the
 * API path, tidectl, the audit action (`proxy.<action>`), the buttons (`label`) and the diagram.
 */
export const ProxyState = z
  .enum(["active", "draining", "inactive", "filling"])
  .describe("Proxy state: active (serves), draining (no new flows), inactive (out of the table), filling");
export type ProxyState = z.infer<typeof ProxyState>;

export const ProxyAction = z
  .enum(["drain", "deactivate", "fill", "activate", "abort"])
  .describe(
    "drain: active->draining; deactivate: draining->inactive; fill: inactive->filling; " +
      "activate: filling->active; abort: undo the change in progress (draining->active, filling->inactive)",
  );
export type ProxyAction = z.infer<typeof ProxyAction>;

export interface ProxyTransition {
  action: ProxyAction;
  from: ProxyState;
  to: ProxyState;
  abort: boolean;
  /** The button's and the diagram's name for this transition. */
  label: string;
}

export const proxyTransitions: readonly ProxyTransition[] = [
  { action: "drain", from: "active", to: "draining", abort: false, label: "Drain" },
  { action: "deactivate", from: "draining", to: "inactive", abort: false, label: "Deactivate" },
  { action: "fill", from: "inactive", to: "filling", abort: false, label: "Fill" },
  { action: "activate", from: "filling", to: "active", abort: false, label: "Activate" },
  { action: "abort", from: "draining", to: "active", abort: true, label: "Abort drain" },
  { action: "abort", from: "filling", to: "inactive", abort: true, label: "Abort fill" },
];

/**
 * Older spellings of the aborts, still accepted so runbooks written before `abort` existed keep
 * working: activate on a draining proxy and deactivate on a filling one. They are recorded as
 * `abort` (audit action and table version cause) and never offered in the console.
 */
const abortAliases: readonly { from: ProxyState; action: ProxyAction }[] = [
  { from: "draining", action: "activate" },
  { from: "filling", action: "deactivate" },
];

/**
 * The transition an action makes from a state (an alias resolves to `abort`), or undefined if the
 * action is not allowed there.
 */
export function transitionFor(from: ProxyState, action: ProxyAction): ProxyTransition | undefined {
  const direct = proxyTransitions.find((t) => t.from === from && t.action === action);
  if (direct) return direct;
  if (abortAliases.some((a) => a.from === from && a.action === action))
    return proxyTransitions.find((t) => t.from === from && t.action === "abort");
  return undefined;
}

export function allowedTransitions(from: ProxyState): ProxyTransition[] {
  return proxyTransitions.filter((t) => t.from === from);
}

/** Eligible proxies count towards the "keep at least 2" invariant: they are in the table's rotation. */
export function isEligible(state: ProxyState): boolean {
  return state === "active" || state === "filling";
}
