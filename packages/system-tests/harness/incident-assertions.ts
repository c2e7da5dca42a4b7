/**
 * Checks shared by the kernel-health end-to-end tests: a finding about an incident namespace names
 * this host and the namespace the agent saw (inode and name), and a resolved finding's history runs
 * opened -> resolved ("cleared" by the window, not "subject gone").
 */
import { expect } from "vitest";
import type { EndToEnd, FindingDetail, FindingRecord } from "./end-to-end-harness";

export function expectNamespaceSubject(env: EndToEnd, f: FindingRecord, namespace: string): void {
  expect(f.subject.hostId).toBe(env.hostId);
  expect(f.subject.netns).toEqual({
    inode: env.observations.inodeOf(namespace),
    name: namespace,
    root: false,
  });
}

export function expectResolvedHistory(f: FindingDetail): void {
  expect(f.status).toBe("resolved");
  expect(f.resolvedAt).not.toBeNull();
  const types = f.history.map((h) => h.type);
  expect(types[0]).toBe("opened");
  expect(types.at(-1)).toBe("resolved");
  expect(f.history.find((h) => h.type === "resolved")?.detail).toMatch(/cleared/);
}

/** Seconds between two ISO timestamps (for the printed figures). */
export function secondsBetween(from: string | number, to: string | number): string {
  const a = typeof from === "number" ? from : Date.parse(from);
  const b = typeof to === "number" ? to : Date.parse(to);
  return ((b - a) / 1000).toFixed(1);
}
