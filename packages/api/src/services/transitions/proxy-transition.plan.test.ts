import { proxyTransitions, type ProxyAction, type ProxyState } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import {
  changeInProgress,
  planProxyActions,
  planTransition,
  type PlannedProxy,
} from "./proxy-transition.plan";

function pool(...states: ProxyState[]): PlannedProxy[] {
  return states.map((state, i) => ({ id: `prx_${i}`, address: `10.0.0.${i + 1}`, hostname: `p${i}`, state }));
}

const actions: ProxyAction[] = ["drain", "deactivate", "fill", "activate", "abort"];
/** Older spellings of abort, still accepted: [state, action]. */
const aliases: [ProxyState, ProxyAction][] = [
  ["draining", "activate"],
  ["filling", "deactivate"],
];
const states: ProxyState[] = ["active", "draining", "inactive", "filling"];

describe("proxy state machine", () => {
  it("allows exactly the documented transitions and refuses the rest with invalid_transition", () => {
    for (const from of states) {
      for (const action of actions) {
        // Four active neighbours so pool invariants never interfere with this table.
        const proxies = [
          ...pool("active", "active", "active", "active"),
          { id: "prx_x", address: "10.0.1.1", hostname: "x", state: from },
        ];
        const plan = planTransition(proxies, "prx_x", action);
        const alias = aliases.some(([s, a]) => s === from && a === action);
        const expected = proxyTransitions.find(
          (t) => t.from === from && t.action === (alias ? "abort" : action),
        );
        if (expected) {
          expect(plan.ok, `${from} --${action}-->`).toBe(true);
          if (plan.ok) expect(plan.to).toBe(expected.to);
        } else {
          expect(plan.ok, `${from} --${action}--> must be refused`).toBe(false);
          if (!plan.ok) {
            expect(plan.error.code).toBe("invalid_transition");
            expect(plan.error.message).toContain(`it is ${from}`);
          }
        }
      }
    }
  });

  it("walks the full forward cycle and both aborts", () => {
    let proxies = pool("active", "active", "active");
    const steps: [ProxyAction, ProxyState][] = [
      ["drain", "draining"],
      ["abort", "active"],
      ["drain", "draining"],
      ["deactivate", "inactive"],
      ["fill", "filling"],
      ["abort", "inactive"],
      ["fill", "filling"],
      ["activate", "active"],
    ];
    for (const [action, to] of steps) {
      const plan = planTransition(proxies, "prx_0", action);
      expect(plan.ok, `${action}`).toBe(true);
      if (!plan.ok) return;
      expect(plan.next.find((p) => p.id === "prx_0")?.state).toBe(to);
      proxies = plan.next;
    }
  });

  it("refuses a second non-active proxy in a pool (conflict) and names the blocking proxy", () => {
    const plan = planTransition(pool("draining", "active", "active", "active"), "prx_2", "drain");
    expect(plan.ok).toBe(false);
    if (plan.ok) return;
    expect(plan.error.code).toBe("conflict");
    expect(plan.error.message).toContain("prx_0");
    expect(plan.error.details).toMatchObject({
      blockingProxyId: "prx_0",
      blockingHostname: "p0",
      blockingState: "draining",
    });
  });

  it("plans the older spellings of abort as abort (the name the audit records)", () => {
    for (const [state, action] of aliases) {
      const plan = planTransition(pool(state, "active", "active"), "prx_0", action);
      expect(plan.ok, `${state} --${action}-->`).toBe(true);
      if (plan.ok) expect(plan.transition.action).toBe("abort");
    }
    const plain = planTransition(pool("filling", "active", "active"), "prx_0", "activate");
    expect(plain.ok && plain.transition.action).toBe("activate");
  });

  it("keeps at least two eligible proxies in a pool of two or more", () => {
    const two = planTransition(pool("active", "active"), "prx_0", "drain");
    expect(two.ok).toBe(false);
    if (!two.ok) expect(two.error.code).toBe("invariant_violation");
    const three = planTransition(pool("active", "active", "active"), "prx_0", "drain");
    expect(three.ok).toBe(true);
  });

  it("lets a pool below two eligible proxies move towards two (filling a newly added proxy)", () => {
    const plan = planTransition(pool("active", "inactive"), "prx_1", "fill");
    expect(plan.ok).toBe(true);
  });

  it("lets a pool no director serves drain and deactivate every proxy, and shows it", () => {
    const unserved = { served: false };
    let proxies = pool("active", "active", "active");
    for (const id of ["prx_0", "prx_1", "prx_2"]) {
      const drained = planTransition(proxies, id, "drain", unserved);
      expect(drained.ok).toBe(true);
      if (drained.ok) proxies = drained.next;
    }
    expect(proxies.map((p) => p.state)).toEqual(["draining", "draining", "draining"]);
    for (const id of ["prx_0", "prx_1", "prx_2"]) {
      const off = planTransition(proxies, id, "deactivate", unserved);
      expect(off.ok).toBe(true);
      if (off.ok) proxies = off.next;
    }
    expect(proxies.every((p) => p.state === "inactive")).toBe(true);
    // The same pool served: the second drain is refused, and the actions say so.
    const served = planTransition(pool("draining", "active", "active"), "prx_1", "drain");
    expect(served.ok).toBe(false);
    const options = planProxyActions(pool("draining", "active", "active"), unserved);
    expect(options.filter((o) => o.action === "drain").every((o) => o.allowed)).toBe(true);
  });

  it("lets a single-proxy pool drain (no 2-eligible rule below two proxies)", () => {
    expect(planTransition(pool("active"), "prx_0", "drain").ok).toBe(true);
  });

  it("reports unknown proxies as not_found and does not mutate its input", () => {
    const proxies = pool("active", "active", "active");
    const copy = structuredClone(proxies);
    const plan = planTransition(proxies, "prx_nope", "drain");
    expect(plan.ok).toBe(false);
    if (!plan.ok) expect(plan.error.code).toBe("not_found");
    planTransition(proxies, "prx_0", "drain");
    expect(proxies).toEqual(copy);
  });
});

describe("allowed actions per proxy (what the console offers)", () => {
  it("offers each proxy its state's actions, all allowed while every proxy is active", () => {
    const options = planProxyActions(pool("active", "active", "active"));
    expect(options.map((o) => [o.proxyId, o.action, o.allowed])).toEqual([
      ["prx_0", "drain", true],
      ["prx_1", "drain", true],
      ["prx_2", "drain", true],
    ]);
    expect(options.every((o) => o.refusal === null)).toBe(true);
  });

  it("while one proxy drains: it may deactivate or abort; the others' drain is refused naming it", () => {
    const options = planProxyActions(pool("active", "draining", "active", "active"));
    const of = (id: string) => options.filter((o) => o.proxyId === id);
    expect(of("prx_1").map((o) => [o.action, o.label, o.allowed])).toEqual([
      ["deactivate", "Deactivate", true],
      ["abort", "Abort drain", true],
    ]);
    for (const id of ["prx_0", "prx_2", "prx_3"]) {
      const [drain] = of(id);
      expect(drain).toMatchObject({ action: "drain", allowed: false });
      expect(drain!.refusal).toMatchObject({
        code: "conflict",
        blockingProxyId: "prx_1",
        blockingHostname: "p1",
      });
      // The same words the action itself answers with.
      const plan = planTransition(pool("active", "draining", "active", "active"), id, "drain");
      expect(!plan.ok && plan.error.message).toBe(drain!.refusal!.message);
    }
  });

  it("refuses a drain that would leave fewer than two eligible proxies, with no blocking proxy", () => {
    const [first] = planProxyActions(pool("active", "active"));
    expect(first).toMatchObject({ action: "drain", allowed: false });
    expect(first!.refusal).toMatchObject({ code: "invariant_violation", blockingProxyId: null });
  });

  it("names the pool's change in progress, or none when every proxy is active", () => {
    const at = new Date("2026-01-02T03:04:05.000Z");
    const dated = (...states: ProxyState[]) => pool(...states).map((p) => ({ ...p, stateChangedAt: at }));
    expect(changeInProgress(dated("active", "active"))).toBeNull();
    expect(changeInProgress(dated("active", "filling", "active"))).toEqual({
      proxyId: "prx_1",
      hostname: "p1",
      state: "filling",
      since: "2026-01-02T03:04:05.000Z",
    });
  });
});
