import { describe, expect, it } from "vitest";
import { hex, unhex, vectors } from "./__fixtures__/testdata";
import { sipBlocks, sipFinish, sipInit, sipKey, sipMessageWords, siphash24, siphash24Bytes } from "./siphash";

describe("SipHash-2-4", () => {
  const v = vectors().siphash24;

  it("has the 64 reference vectors (key 00..0f, message 00..n-1)", () => {
    expect(v).toHaveLength(64);
  });

  it.each(v.map((x, n) => [n, x] as const))("message of %i bytes", (_n, x) => {
    expect(hex(siphash24Bytes(unhex(x.key), unhex(x.message)))).toBe(x.output);
    expect(siphash24(unhex(x.key), unhex(x.message))).toBe(BigInt(`0x${x.u64}`));
  });

  it("compressing a shared prefix once gives the same digest as hashing the whole message", () => {
    const key = unhex("000102030405060708090a0b0c0d0e0f");
    const msg = Uint8Array.from({ length: 20 }, (_, i) => i * 7 + 3);
    const words = new Int32Array(6);
    const blocks = sipMessageWords(msg, msg.length, words, 0);
    expect(blocks).toBe(3);
    const state = new Int32Array(8);
    sipInit(sipKey(key), state);
    sipBlocks(state, words, 0, 1);
    const out = new Uint32Array(2);
    sipFinish(state, words, 2, 2, out, 0);
    const whole = siphash24(key, msg);
    expect((BigInt(out[1]!) << 32n) | BigInt(out[0]!)).toBe(whole);
  });

  it("rejects keys that are not 16 bytes", () => {
    expect(() => sipKey(new Uint8Array(15))).toThrow(/16 bytes/);
  });
});
