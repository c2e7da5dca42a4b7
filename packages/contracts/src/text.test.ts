import { describe, expect, it } from "vitest";
import { findUnsafeText, safeText, unsafeTextReason } from "./text";

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
});
