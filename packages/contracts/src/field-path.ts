/**
 * How a field of a request is named: in API error details (`fields`, keyed by fieldPath) and in
 * sentences people read (fieldInWords). The API writes both; the console turns a key back into
 * words for fields its form does not show (parseFieldPath).
 */

/** A zod issue path as the console names fields: ["binds", 1, "address"] -> "binds[1].address". */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

/** The inverse of fieldPath: "binds[1].address" -> ["binds", 1, "address"]. */
export function parseFieldPath(key: string): (string | number)[] {
  const parts: (string | number)[] = [];
  for (const m of key.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (m[2] !== undefined) parts.push(Number(m[2]));
    else if (m[1] !== undefined) parts.push(m[1]);
  }
  return parts;
}

/**
 * A zod issue path in words, for sentences people read: ["targets", 0, "sizes", 1] ->
 * "targets entry 1, sizes entry 2" (entries count from 1, as people count lines).
 */
export function fieldInWords(path: readonly PropertyKey[]): string {
  const words: string[] = [];
  for (const part of path) {
    if (typeof part === "number") {
      const entry = `entry ${part + 1}`;
      if (words.length) words[words.length - 1] += ` ${entry}`;
      else words.push(entry);
    } else words.push(String(part));
  }
  return words.join(", ") || "the input";
}
