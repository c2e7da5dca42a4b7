import { createHash } from "node:crypto";

/** sha256 of a table file's bytes, lower-case hex: identifies a table version across hosts. */
export function tableContentHash(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
