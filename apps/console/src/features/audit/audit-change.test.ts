import { describe, expect, it } from "vitest";
import { changedFields, valueText } from "./audit-change";

describe("changedFields", () => {
  it.each([
    {
      name: "a drain: only the field that changed",
      before: { state: "active", healthy: true },
      after: { state: "draining", healthy: true },
      want: [{ field: "state", before: "active", after: "draining" }],
    },
    {
      name: "nested settings by dotted path, lists comma-separated",
      before: { healthCheck: { rise: 3, fall: 3 }, hashFields: ["src_addr"] },
      after: { healthCheck: { rise: 2, fall: 3 }, hashFields: ["src_addr", "src_port"] },
      want: [
        { field: "healthCheck.rise", before: "3", after: "2" },
        { field: "hashFields", before: "src_addr", after: "src_addr, src_port" },
      ],
    },
    {
      name: "a creation: every field is new",
      before: null,
      after: { name: "web", tableVersion: 1 },
      want: [
        { field: "name", before: null, after: "web" },
        { field: "tableVersion", before: null, after: "1" },
      ],
    },
    {
      name: "a removal: fields gone",
      before: { pinned: false },
      after: {},
      want: [{ field: "pinned", before: "false", after: null }],
    },
    {
      name: "plain values",
      before: "a",
      after: "b",
      want: [{ field: "", before: "a", after: "b" }],
    },
    {
      name: "a setting that was none and is now an object: its fields, not 'none (removed)'",
      before: { enabled: false, service: null },
      after: { enabled: true, service: { kind: "tcp", port: 443 } },
      want: [
        { field: "enabled", before: "false", after: "true" },
        { field: "service.kind", before: null, after: "tcp" },
        { field: "service.port", before: null, after: "443" },
      ],
    },
    { name: "nothing recorded", before: null, after: null, want: [] },
    { name: "nothing changed", before: { a: 1 }, after: { a: 1 }, want: [] },
  ])("$name", ({ before, after, want }) => {
    expect(changedFields(before, after)).toEqual(want);
  });
});

describe("valueText", () => {
  it.each([
    [null, "none"],
    ["", '""'],
    [[], "none"],
    [[{ a: 1 }], '[{"a":1}]'],
    [false, "false"],
  ])("%j -> %s", (value, text) => {
    expect(valueText(value)).toBe(text);
  });
});
