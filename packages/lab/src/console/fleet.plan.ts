/**
 * What the lab registers with a console (pure): one pool with the lab's VIP binds and hash fields,
 * one proxy per proxy namespace, one director per director namespace, each named by the host name
 * its tide-agent reports. The effects (REST calls, in order) live in fleet-registration.ts.
 */
import { type Bind, type HashField, type ProxyAction, type ProxyState } from "@tide/contracts";
import { labBinds, LAB_HASH_FIELDS } from "../lab-table";
import { type GlbTopology } from "../topology";
import { type CreatePoolRequest, type PoolBindInput } from "./console-client";

/** The pool the lab registers (its directors call their table by this name). */
export const CONSOLE_POOL_NAME = "lab";

export interface LabHost {
  /** Lab node: dir1, prx2. */
  name: string;
  /** Host name the node's agent reports and its host token is for: lab-director-1, lab-proxy-2. */
  hostname: string;
  role: "director" | "proxy";
  /** The node's network namespace (the only one its agent samples). */
  namespace: string;
  /** Proxy address (the outer GUE destination); null for a director. */
  address: string | null;
}

/** Every lab node that is a fleet host: the directors, then the proxies. */
export function labHosts(topology: GlbTopology): LabHost[] {
  return [
    ...topology.directors.map((d, i) => ({
      name: d.name,
      hostname: `lab-director-${i + 1}`,
      role: "director" as const,
      namespace: d.namespace,
      address: null,
    })),
    ...topology.proxies.map((p, i) => ({
      name: p.name,
      hostname: `lab-proxy-${i + 1}`,
      role: "proxy" as const,
      namespace: p.namespace,
      address: p.address,
    })),
  ];
}

export function labPoolBinds(topology: GlbTopology): PoolBindInput[] {
  return labBinds(topology).map((b) => ({
    address: b.address,
    proto: b.proto,
    portStart: b.portStart,
    portEnd: b.portEnd,
  }));
}

export function labPoolRequest(topology: GlbTopology): CreatePoolRequest {
  return {
    name: CONSOLE_POOL_NAME,
    description: `Tide lab: VIP ${topology.vip} on ${topology.proxies.length} proxies in network namespaces (${topology.prefix}-*)`,
    hashFields: [...LAB_HASH_FIELDS],
    binds: labPoolBinds(topology),
  };
}

const bindKey = (b: { address: string; proto: string; portStart: number; portEnd?: number | undefined }) =>
  `${b.proto} ${b.address.replace(/\/(32|128)$/, "")} ${b.portStart}-${b.portEnd ?? b.portStart}`;

/** Whether the console's binds are the lab's (order does not matter; /32 = a single address). */
export function bindsMatch(console: readonly Bind[], wanted: readonly PoolBindInput[]): boolean {
  const a = console.map(bindKey).sort();
  const b = wanted.map(bindKey).sort();
  return a.length === b.length && a.every((k, i) => k === b[i]);
}

/**
 * The binds to set so the console's pool has every lab bind, keeping the ones an operator added
 * (a VIP routed with `lab vip add` and bound in the console survives another `lab up`), or null
 * when every lab bind is there already.
 */
export function bindsWithLab(
  console: readonly Bind[],
  wanted: readonly PoolBindInput[],
): PoolBindInput[] | null {
  const have = new Set(console.map(bindKey));
  const missing = wanted.filter((b) => !have.has(bindKey(b)));
  if (missing.length === 0) return null;
  const kept = console.map((b) => ({
    address:
      b.address.includes("/") || b.prefixBits === 32 || b.prefixBits === 128
        ? b.address
        : `${b.address}/${b.prefixBits}`,
    proto: b.proto,
    portStart: b.portStart,
    portEnd: b.portEnd,
  }));
  return [...kept, ...missing];
}

export function hashFieldsMatch(console: readonly HashField[], wanted: readonly HashField[]): boolean {
  return console.length === wanted.length && console.every((f, i) => f === wanted[i]);
}

/**
 * The next action that brings a proxy the lab just added towards active through the state machine
 * (inactive -> fill -> filling -> activate -> active), or null when it is active. A proxy joins
 * inactive when its pool already carries traffic (packages/api proxy-lifecycle.service.ts).
 */
export function nextActionTowardsActive(state: ProxyState): ProxyAction | null {
  switch (state) {
    case "active":
      return null;
    case "inactive":
      return "fill";
    case "filling":
    case "draining":
      return "activate";
  }
}
