import { describe, expect, it } from "vitest";
import { KERNEL_FINDING_KINDS, KERNEL_INCIDENTS, kernelIncident, LAST_KERNEL_INCIDENT } from "./incidents";

describe("the kernel incident registry", () => {
  it("numbers incidents 1..n in order, as kernel-signals.md does", () => {
    expect(KERNEL_INCIDENTS.map((i) => i.number)).toEqual(KERNEL_INCIDENTS.map((_, index) => index + 1));
    expect(LAST_KERNEL_INCIDENT).toBe(KERNEL_INCIDENTS.length);
  });

  it("gives every incident its own slug and at least one kind, and every kind one incident", () => {
    expect(new Set(KERNEL_INCIDENTS.map((i) => i.slug)).size).toBe(KERNEL_INCIDENTS.length);
    for (const i of KERNEL_INCIDENTS) expect(Object.keys(i.kinds).length).toBeGreaterThan(0);
    expect(new Set(KERNEL_FINDING_KINDS).size).toBe(KERNEL_FINDING_KINDS.length);
  });

  it("finds an incident by slug and refuses an unknown one", () => {
    expect(kernelIncident("softirq-stall").number).toBe(5);
    expect(() => kernelIncident("disk-full" as never)).toThrow(/no kernel incident disk-full/);
  });
});
