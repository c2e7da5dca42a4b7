import { describe, expect, it } from "vitest";
import { goldenBin } from "./__fixtures__/testdata";
import {
  decodeGlbd,
  encodeGlbd,
  glbdFileSize,
  GLBD_TABLE_SIZE,
  GlbdFormatError,
  type GlbdErrorCode,
} from "./glbd-codec";

const golden = goldenBin("golden-drain");
const T = 24; // first table
const BINDS = T + 4 + 256 * 24 + 4;
const ROWS = T + 4 + 256 * 24 + 4 + 256 * 28 + 16;

function corrupt(edit: (view: DataView, bytes: Uint8Array) => void, bytes = golden): Uint8Array {
  const copy = Uint8Array.from(bytes);
  edit(new DataView(copy.buffer), copy);
  return copy;
}

function codeOf(bytes: Uint8Array): GlbdErrorCode | "none" {
  try {
    decodeGlbd(bytes);
    return "none";
  } catch (e) {
    if (e instanceof GlbdFormatError) return e.code;
    throw e;
  }
}

describe("GLBD v2 codec", () => {
  it("knows the sizes", () => {
    expect(GLBD_TABLE_SIZE).toBe(537_624);
    expect(glbdFileSize(2)).toBe(1_075_272);
  });

  it("accepts the golden file", () => {
    expect(codeOf(golden)).toBe("none");
  });

  it.each<[string, GlbdErrorCode, (v: DataView, b: Uint8Array) => void]>([
    ["magic", "bad_magic", (_v, b) => (b[0] = 0x58)],
    ["version", "bad_version", (v) => v.setUint32(4, 1, true)],
    ["table_entries", "bad_header", (v) => v.setUint32(12, 4096, true)],
    ["max_backends", "bad_header", (v) => v.setUint32(16, 128, true)],
    ["num_tables vs size", "bad_size", (v) => v.setUint32(8, 2, true)],
    ["num_backends > 256", "too_many_backends", (v) => v.setUint32(T, 257, true)],
    ["num_backends 0", "no_backends", (v) => v.setUint32(T, 0, true)],
    ["backend family", "bad_family", (v) => v.setUint32(T + 4, 3, true)],
    ["IPv4 padding", "bad_address", (_v, b) => (b[T + 4 + 4 + 5] = 1)],
    ["backend state", "bad_state", (v) => v.setUint16(T + 4 + 20, 3, true)],
    ["backend health", "bad_health", (v) => v.setUint16(T + 4 + 22, 2, true)],
    ["unused backend slot", "dirty_slot", (_v, b) => (b[T + 4 + 12 * 24 + 3] = 1)],
    [
      "duplicate backend",
      "duplicate_backend",
      (_v, b) => b.copyWithin(T + 4 + 24 + 4, T + 4 + 4, T + 4 + 20),
    ],
    ["num_binds > 256", "too_many_binds", (v) => v.setUint32(BINDS - 4, 300, true)],
    ["bind family", "bad_family", (v) => v.setUint32(BINDS, 0, true)],
    ["bind prefix", "bad_prefix", (v) => v.setUint16(BINDS + 20, 33, true)],
    ["bind ports", "bad_port_range", (v) => v.setUint16(BINDS + 28 + 22, 9000, true)],
    ["bind proto", "bad_proto", (_v, b) => (b[BINDS + 26] = 1)],
    ["bind reserved", "bad_reserved", (_v, b) => (b[BINDS + 27] = 1)],
    ["unused bind slot", "dirty_slot", (_v, b) => (b[BINDS + 5 * 28] = 1)],
    ["primary index", "backend_index_out_of_range", (v) => v.setUint32(ROWS + 8 * 777, 12, true)],
    ["secondary index", "backend_index_out_of_range", (v) => v.setUint32(ROWS + 8 * 65535 + 4, 255, true)],
  ])("rejects a bad %s", (_what, code, edit) => {
    expect(codeOf(corrupt(edit))).toBe(code);
  });

  it("says where a bad row index is", () => {
    const bytes = corrupt((v) => v.setUint32(ROWS + 8 * 777, 12, true));
    try {
      decodeGlbd(bytes);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(GlbdFormatError);
      const err = e as GlbdFormatError;
      expect(err.location).toEqual({ table: 0, row: 777, offset: ROWS + 8 * 777 });
      expect(err.message).toMatch(/table 0.*row 777.*byte offset/);
    }
  });

  it("rejects truncated and empty input", () => {
    expect(codeOf(golden.subarray(0, golden.length - 1))).toBe("bad_size");
    expect(codeOf(new Uint8Array(0))).toBe("bad_size");
  });

  it("decodes a view that does not start at offset 0 of its buffer", () => {
    const padded = new Uint8Array(golden.length + 3);
    padded.set(golden, 3);
    const tables = decodeGlbd(padded.subarray(3));
    expect(Buffer.from(encodeGlbd(tables)).equals(Buffer.from(golden))).toBe(true);
  });

  it("refuses to encode what the format cannot hold", () => {
    const [t] = decodeGlbd(golden);
    const tooMany = {
      ...t!,
      backends: Array.from({ length: 257 }, (_, i) => ({
        address: `10.9.${i >> 8}.${i & 255}`,
        state: "active" as const,
        healthy: true,
      })),
    };
    expect(() => encodeGlbd([tooMany])).toThrow(GlbdFormatError);
    const badRow = { ...t!, primary: Uint16Array.from(t!.primary, (p, r) => (r === 5 ? 40 : p)) };
    expect(() => encodeGlbd([badRow])).toThrow(/row 5/);
  });
});
