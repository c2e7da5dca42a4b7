/** GLBD v3: the v2 layout plus one 4-byte hash-field entry per table after the last table. */
import { describe, expect, it } from "vitest";
import { goldenBin, unhex, vectors } from "./__fixtures__/testdata";
import { buildTable } from "./build";
import { tableContentHash } from "./content-hash";
import { explainFlow } from "./explain";
import {
  decodeGlbd,
  encodeGlbd,
  glbdFileSize,
  GLBD_TABLE_SIZE,
  GlbdFormatError,
  type GlbdErrorCode,
} from "./glbd-codec";
import { type ForwardingTable, type HashField } from "./types";

const flows = vectors().flows;
/** Two published vectors on the same table and client address: src_addr vs src_addr+src_port. */
const srcOnly = flows.find((f) => f.fields.join() === "src_addr" && f.source === "published")!;
const srcAndPort = flows.find((f) => f.fields.join() === "src_addr,src_port" && f.source === "published")!;

function vectorTable(v: typeof srcOnly, vip: string): ForwardingTable {
  return {
    ...buildTable({
      hashKey: unhex(v.hashKey),
      seed: unhex(v.seed),
      binds: [{ address: vip, prefixBits: 32, proto: "tcp", portStart: 443, portEnd: 443 }],
      backends: v.proxies.map((address) => ({ address, state: "active", healthy: true })),
    }),
    hashFields: [...v.fields],
  };
}

/** Pool A (src_addr) and pool B (src_addr+src_port, migrating from src_addr) in one file. */
function twoPools(): ForwardingTable[] {
  const a = vectorTable(srcOnly, "203.0.113.10");
  const b = vectorTable(srcAndPort, "203.0.113.20");
  b.altHashFields = ["src_addr"];
  return [a, b];
}

const TRAILER = 24 + 2 * GLBD_TABLE_SIZE;

function codeOf(bytes: Uint8Array): GlbdErrorCode | "none" {
  try {
    decodeGlbd(bytes);
    return "none";
  } catch (e) {
    if (e instanceof GlbdFormatError) return e.code;
    throw e;
  }
}

function errorOf(fn: () => unknown): GlbdFormatError {
  try {
    fn();
  } catch (e) {
    if (e instanceof GlbdFormatError) return e;
    throw e;
  }
  throw new Error("expected a GlbdFormatError");
}

describe("GLBD v3 codec", () => {
  it("writes the v2 layout, version 3 and one trailer entry per table", () => {
    const tables = twoPools();
    const v3 = encodeGlbd(tables);
    const v2 = encodeGlbd(tables.map(({ hashFields: _f, altHashFields: _a, ...t }) => t));
    expect(v3.length).toBe(24 + 2 * 537_624 + 2 * 4);
    expect(v3.length).toBe(glbdFileSize(2, 3));
    const view = new DataView(v3.buffer);
    expect(view.getUint32(4, true)).toBe(3);
    expect(new DataView(v2.buffer).getUint32(4, true)).toBe(2);
    // Everything but the version field is the v2 file, byte for byte.
    expect(Buffer.from(v3.subarray(8, TRAILER)).equals(Buffer.from(v2.subarray(8)))).toBe(true);
    // A: src_addr 0x1, no migration. B: src_addr|src_port 0x5, alt src_addr 0x1.
    expect([...v3.subarray(TRAILER)]).toEqual([0x1, 0x0, 0, 0, 0x5, 0x1, 0, 0]);
  });

  it("decodes each table's fields in the canonical order and re-encodes the same bytes", () => {
    const tables = twoPools();
    tables[1]!.hashFields = ["src_port", "src_addr"];
    const bytes = encodeGlbd(tables);
    const decoded = decodeGlbd(bytes);
    expect(decoded.map((t) => [t.hashFields, t.altHashFields])).toEqual([
      [["src_addr"], []],
      [["src_addr", "src_port"], ["src_addr"]],
    ]);
    expect(Buffer.from(encodeGlbd(decoded)).equals(Buffer.from(bytes))).toBe(true);
  });

  it("leaves a v2 table's fields unset, and keeps writing v2 for it", () => {
    const golden = goldenBin("golden-drain");
    const [t] = decodeGlbd(golden);
    expect(t).not.toHaveProperty("hashFields");
    expect(t).not.toHaveProperty("altHashFields");
    expect(Buffer.from(encodeGlbd([t!])).equals(Buffer.from(golden))).toBe(true);
  });

  it("gives a pool a different content hash when its fields change (the hash covers them)", () => {
    const [a] = twoPools();
    const { hashFields: _f, ...v2 } = a!;
    const hashes = new Set([
      tableContentHash(encodeGlbd([v2])),
      tableContentHash(encodeGlbd([a!])),
      tableContentHash(encodeGlbd([{ ...a!, hashFields: ["src_addr", "dst_port"] }])),
    ]);
    expect(hashes.size).toBe(3);
  });

  it.each<[string, (t: ForwardingTable[]) => void, RegExp]>([
    ["a table without fields beside one with", (t) => delete t[0]!.hashFields, /another table has/],
    ["empty hashFields", (t) => (t[0]!.hashFields = []), /empty/],
    ["an unknown field", (t) => (t[1]!.hashFields = ["proto" as HashField]), /unknown hash field "proto"/],
    ["a repeated field", (t) => (t[1]!.hashFields = ["src_port", "src_port"]), /given twice/],
    ["a bad alt field", (t) => (t[0]!.altHashFields = ["dst_mac" as HashField]), /altHashFields/],
  ])("refuses to encode %s", (_what, edit, message) => {
    const tables = twoPools();
    edit(tables);
    const err = errorOf(() => encodeGlbd(tables));
    expect(err.code).toBe("bad_hash_fields");
    expect(err.message).toMatch(message);
    expect(err.location.table).toBeDefined();
  });

  const good = encodeGlbd(twoPools());
  it.each<[string, number, number, GlbdErrorCode, number]>([
    ["hash_fields 0", TRAILER, 0x00, "bad_hash_fields", 0],
    ["hash_fields with an unknown bit", TRAILER + 4, 0x15, "bad_hash_fields", 1],
    ["alt_hash_fields with an unknown bit", TRAILER + 5, 0x80, "bad_alt_hash_fields", 1],
    ["a non-zero reserved field", TRAILER + 3, 0x01, "bad_reserved", 0],
  ])("rejects %s with its table and offset", (_what, at, value, code, table) => {
    const bad = Uint8Array.from(good);
    bad[at] = value;
    const err = errorOf(() => decodeGlbd(bad));
    expect(err.code).toBe(code);
    expect(err.location.table).toBe(table);
    expect(err.location.offset).toBe(code === "bad_reserved" ? TRAILER + 2 : at);
  });

  it("rejects a v3 header on a v2-sized file, a v3 file without its trailer, and version 4", () => {
    const v2 = Uint8Array.from(goldenBin("golden-drain"));
    new DataView(v2.buffer).setUint32(4, 3, true);
    expect(codeOf(v2)).toBe("bad_size");
    expect(codeOf(good.subarray(0, good.length - 4))).toBe("bad_size");
    const v4 = Uint8Array.from(good);
    new DataView(v4.buffer).setUint32(4, 4, true);
    expect(codeOf(v4)).toBe("bad_version");
  });

  it("explainFlow uses each table's own fields (the reference's vectors), explicit fields win", () => {
    const [a, b] = decodeGlbd(encodeGlbd(twoPools()));
    for (const [table, v] of [
      [a!, srcOnly],
      [b!, srcAndPort],
    ] as const) {
      const flow = { srcAddr: v.srcAddr, srcPort: v.srcPort };
      expect(explainFlow(table, flow)).toEqual({
        digest: v.digest,
        row: v.row,
        primary: v.primary,
        secondary: v.secondary,
        outerSourcePort: v.outerSourcePort,
      });
    }
    const flow = { srcAddr: srcAndPort.srcAddr, srcPort: srcAndPort.srcPort };
    expect(explainFlow(b!, flow, ["src_addr"]).digest).toBe(srcOnly.digest);
    expect(explainFlow(a!, flow).digest).not.toBe(explainFlow(b!, flow).digest);
  });
});
