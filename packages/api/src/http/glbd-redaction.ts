import { GLBD_HEADER_SIZE, GLBD_TABLE_SIZE, TABLE_ROWS } from "@tide/forwarding";

/** Where hash_key[16] sits inside one GLBD table: just before its 65,536 x 8-byte rows (13,320). */
const TABLE_HASH_KEY_OFFSET = GLBD_TABLE_SIZE - TABLE_ROWS * 8 - 16;
/** Offset of num_tables in the GLBD header ("GLBD", u32 version, u32 num_tables, …). */
const NUM_TABLES_OFFSET = 8;

/**
 * A copy of a GLBD file (v2 or v3: same table layout) with every table's hash key zeroed. The
 * key (byte 13,344 of a one-table file) decides which row, so which proxy, a client's flow hashes
 * to: with it a client could pick source ports that steer its traffic onto one proxy.
 */
export function redactHashKeys(content: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = Uint8Array.from(content);
  if (out.length < GLBD_HEADER_SIZE) return out;
  const numTables = new DataView(out.buffer, out.byteOffset, out.byteLength).getUint32(
    NUM_TABLES_OFFSET,
    true,
  );
  for (let t = 0; t < numTables; t++) {
    const at = GLBD_HEADER_SIZE + t * GLBD_TABLE_SIZE + TABLE_HASH_KEY_OFFSET;
    if (at + 16 > out.length) break;
    out.fill(0, at, at + 16);
  }
  return out;
}
