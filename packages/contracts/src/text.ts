import { z } from "zod";

/**
 * Free text that PostgreSQL and the audit log can hold: no NUL (PostgreSQL text refuses U+0000)
 * and no lone UTF-16 surrogates (not encodable as UTF-8). Used for reasons, names and filters, and
 * by the API's input check, which walks every request's input with findUnsafeText.
 */
const NUL = "\u0000";
/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be stored, or null when it can. */
export function unsafeTextReason(value: string): string | null {
  if (value.includes(NUL)) return "must not contain NUL (\\u0000) characters";
  if (LONE_SURROGATE.test(value)) return "must be valid Unicode (it holds a lone surrogate)";
  return null;
}

/** A string schema that refuses NUL and broken Unicode with a plain message. */
export function safeText() {
  return z.string().superRefine((value, ctx) => {
    const reason = unsafeTextReason(value);
    if (reason) ctx.addIssue({ code: "custom", message: `Text ${reason}.` });
  });
}

/**
 * The first string (value or object key) in a JSON-like value that cannot be stored, with its path
 * (["reason"], ["binds", 1, "address"]); null when every string is safe. Depth-bounded: inputs
 * deeper than 64 levels are reported as unsafe rather than walked.
 */
export function findUnsafeText(
  value: unknown,
  path: (string | number)[] = [],
): { path: (string | number)[]; reason: string } | null {
  if (path.length > 64) return { path, reason: "is nested too deeply" };
  if (typeof value === "string") {
    const reason = unsafeTextReason(value);
    return reason ? { path, reason } : null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnsafeText(value[i], [...path, i]);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    for (const [key, inner] of Object.entries(value)) {
      const keyReason = unsafeTextReason(key);
      if (keyReason) return { path: [...path, key], reason: `has a field name that ${keyReason}` };
      const found = findUnsafeText(inner, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}
