import { describe, expect, it } from "vitest";
import { findUnsafeText, jsonMayHoldUnsafeText, safeText, unsafeTextReason } from "./text";

describe("storable text (no NUL, no lone surrogates)", () => {
  it.each<[string, string, RegExp | null]>([
    ["plain", "kernel upgrade", null],
    ["emoji (a surrogate pair)", "rack 🚀 move", null],
    ["accents and CJK", "mise à jour 内核", null],
    ["NUL", "kernel\u0000upgrade", /NUL/],
    ["lone high surrogate", "a\ud800b", /lone surrogate/],
    ["lone high surrogate at the end", "a\ud83d", /lone surrogate/],
    ["lone low surrogate", "\udc00a", /lone surrogate/],
    ["swapped pair", "\ude80\ud83d", /lone surrogate/],
  ])("%s", (_, value, reason) => {
    const got = unsafeTextReason(value);
    if (reason) expect(got).toMatch(reason);
    else expect(got).toBeNull();
    expect(safeText().safeParse(value).success).toBe(reason === null);
  });

  it("finds the first unsafe string in nested input, keys included, with its path", () => {
    expect(findUnsafeText({ a: ["ok", { b: "x\u0000" }] })).toEqual({
      path: ["a", 1, "b"],
      reason: expect.stringMatching(/NUL/) as unknown as string,
    });
    expect(findUnsafeText({ ["k\ud800"]: 1 })?.path).toEqual(["k\ud800"]);
    expect(findUnsafeText({ a: [1, true, null, "fine", { b: new Date(0) }] })).toBeNull();
    expect(findUnsafeText(undefined)).toBeNull();
  });

  it("refuses input nested deeper than it walks instead of overflowing the stack", () => {
    let deep: unknown = "x";
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(findUnsafeText(deep)?.reason).toMatch(/nested too deeply/);
  });

  it("says JSON text may hold unsafe text whenever a string in it is unsafe", () => {
    // Strings from characters near every rule: NUL and other controls, lone and paired
    // surrogates, quotes and backslashes (escaped by JSON), a literal "\u" (an escaped backslash)
    const pieces = [
      "a",
      "u",
      "\\",
      '"',
      "\u0000",
      "\u0001",
      "\u001f",
      "\ud83d",
      "\ude80",
      "🚀",
      "é",
      "\\u0000",
    ];
    let seed = 7;
    const pick = () => pieces[(seed = (seed * 48271) % 2147483647) % pieces.length]!;
    let unsafe = 0;
    for (let i = 0; i < 5000; i++) {
      const s = Array.from({ length: 1 + (i % 6) }, pick).join("");
      const value = i % 2 ? { reason: s } : { [s]: [1, s] };
      const text = JSON.stringify(value);
      if (findUnsafeText(value)) {
        unsafe++;
        expect(jsonMayHoldUnsafeText(text), JSON.stringify(s)).toBe(true);
      }
      // What JSON.parse makes of the text is as safe as the value it was written from
      expect(findUnsafeText(JSON.parse(text)) === null).toBe(findUnsafeText(value) === null);
    }
    expect(unsafe).toBeGreaterThan(500);
    // Agents' batches: no escape, so the walk is skipped
    expect(
      jsonMayHoldUnsafeText(JSON.stringify({ kernelRelease: "6.12.48 🚀", counters: { IpFragFails: 0 } })),
    ).toBe(false);
  });
});
