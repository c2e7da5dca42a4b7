import { describe, expect, it } from "vitest";
import { backoffMs, BACKOFF_MAX_MS } from "./backoff";
import { redact } from "./console-link";
import { RingBuffer } from "./ring-buffer";

describe("RingBuffer", () => {
  it("keeps order and drops the oldest when full", () => {
    const b = new RingBuffer<number>(3);
    for (const n of [1, 2, 3, 4, 5]) b.push(n);
    expect(b.size).toBe(3);
    expect(b.dropped).toBe(2);
    expect(b.peek(10)).toEqual([3, 4, 5]);
  });

  it("peek does not remove; drop removes the oldest delivered", () => {
    const b = new RingBuffer<string>(4);
    ["a", "b", "c"].forEach((s) => b.push(s));
    expect(b.peek(2)).toEqual(["a", "b"]);
    b.drop(2);
    b.push("d");
    b.push("e");
    b.push("f");
    expect(b.peek(10)).toEqual(["c", "d", "e", "f"]);
    b.drop(10);
    expect(b.size).toBe(0);
    expect(b.peek(1)).toEqual([]);
  });

  it("holds ten minutes of one-second samples", () => {
    const b = new RingBuffer<number>(600);
    for (let i = 0; i < 1000; i++) b.push(i);
    expect(b.peek(1)).toEqual([400]);
    expect(b.size).toBe(600);
  });

  it("rejects a non-positive capacity", () => {
    expect(() => new RingBuffer(0)).toThrow();
    expect(() => new RingBuffer(1, 0)).toThrow();
  });

  it("is bounded in bytes too: the oldest go first, the newest stays even when it alone is too big", () => {
    const b = new RingBuffer<string>(100, 10);
    expect(b.push("a", 4)).toBe(0);
    expect(b.push("b", 4)).toBe(0);
    expect(b.push("c", 4)).toBe(1);
    expect(b.peek(10)).toEqual(["b", "c"]);
    expect(b.bytes).toBe(8);
    expect(b.push("huge", 50)).toBe(2);
    expect(b.peek(10)).toEqual(["huge"]);
    expect(b.bytes).toBe(50);
    expect(b.push("d", 1)).toBe(1);
    expect(b.bytes).toBe(1);
    expect(b.dropped).toBe(4);
    expect(b.drop(5)).toBe(1);
    expect(b.bytes).toBe(0);
  });
});

describe("backoffMs", () => {
  it("doubles from 1 s and caps at 60 s (+ jitter)", () => {
    expect(backoffMs(0)).toBe(0);
    expect(backoffMs(1, () => 0)).toBe(1000);
    expect(backoffMs(3, () => 0)).toBe(4000);
    expect(backoffMs(30, () => 0)).toBe(BACKOFF_MAX_MS);
    expect(backoffMs(30, () => 1)).toBe(BACKOFF_MAX_MS * 1.2);
  });
});

describe("redact", () => {
  it("removes the token and anything shaped like a host token", () => {
    expect(redact("bad tide_host_abc123 and secret", "secret")).toBe("bad tide_host_[redacted] and [token]");
  });
});
