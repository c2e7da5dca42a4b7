/**
 * The incident registry (@tide/contracts' KERNEL_INCIDENTS) against what this package holds: one
 * rule per incident making exactly the incident's kinds, and docs/kernel-signals.md listing every
 * incident under its number and title.
 */
import { readFileSync } from "node:fs";
import { KERNEL_INCIDENTS } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { ruleOfIncident, rules } from "./diagnose";

const KERNEL_SIGNALS = new URL("../docs/kernel-signals.md", import.meta.url);

describe("the incident registry in diagnostics", () => {
  it.each(KERNEL_INCIDENTS.map((i) => [i.slug, i] as const))("%s has a rule making its kinds", (slug, i) => {
    expect([...ruleOfIncident[slug].kinds].sort()).toEqual(Object.keys(i.kinds).sort());
  });

  it("runs one rule per incident, in the registry's order", () => {
    expect(rules).toEqual(KERNEL_INCIDENTS.map((i) => ruleOfIncident[i.slug]));
    expect(new Set(rules).size).toBe(KERNEL_INCIDENTS.length);
  });

  it("kernel-signals.md lists every incident under its number and title, in order", () => {
    const doc = readFileSync(KERNEL_SIGNALS, "utf8");
    const section = doc.split("\n## ").find((s) => s.startsWith("Incidents")) ?? "";
    const listed = [...section.matchAll(/^(\d+)\. (.+?)\. /gm)].map((m) => [Number(m[1]), m[2]]);
    expect(listed).toEqual(KERNEL_INCIDENTS.map((i) => [i.number, i.title]));
  });
});
