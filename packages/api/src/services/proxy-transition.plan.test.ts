import { proxyTransitions, type ProxyAction, type ProxyState } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { planTransition, type PlannedProxy } from "./proxy-transition.plan";

function pool(...states: ProxyState[]): PlannedProxy[] {
  return states.map((state, i) => ({ id: `prx_${i}`, address: `10.0.0.${i + 1}`, hostname: `p${i}`, state }));
}

const actions: ProxyAction[] = ["drain", "deactivate", "fill", "activate"];
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
        const expected = proxyTransitions.find((t) => t.from === from && t.action === action);
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
      ["activate", "active"], // abort drain
      ["drain", "draining"],
      ["deactivate", "inactive"],
      ["fill", "filling"],
      ["deactivate", "inactive"], // abort fill
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
    expect(plan.error.details).toMatchObject({ blockingProxyId: "prx_0", blockingState: "draining" });
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
