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

/** Any UTF-16 surrogate: a string without one (and without NUL) is safe without the lookarounds. */
const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * The first string (value or object key) in a JSON-like value that cannot be stored, with its path
 * (["reason"], ["binds", 1, "address"]); null when every string is safe. Depth-bounded: inputs
 * deeper than 64 levels are reported as unsafe rather than walked.
 *
 * Every API request's input goes through here (agent batches too: tens of KB of samples), so the
 * walk shares one path array and copies it only for the answer, and a string is checked by two
 * native scans unless it holds a NUL or a surrogate.
 */
export function findUnsafeText(
  value: unknown,
  path: (string | number)[] = [],
): { path: (string | number)[]; reason: string } | null {
  return walk(value, [...path]);
}

/**
 * Whether JSON text can hold a string findUnsafeText refuses, for text decoded as strict UTF-8 (a
 * fatal TextDecoder, as the API reads bodies): JSON allows no raw control character and strict
 * UTF-8 no lone surrogate, so a NUL or a lone surrogate can only come from a \u escape, which
 * JSON.stringify writes for nothing but control characters and lone surrogates. False lets a caller
 * skip the walk (an agent batch: ~125 us); depth is not looked at.
 */
export function jsonMayHoldUnsafeText(text: string): boolean {
  return text.includes("\\u");
}

function textReason(value: string): string | null {
  return value.includes(NUL) || SURROGATE.test(value) ? unsafeTextReason(value) : null;
}

/** findUnsafeText over `path` (mutated while walking, restored before returning null). */
function walk(
  value: unknown,
  path: (string | number)[],
): { path: (string | number)[]; reason: string } | null {
  if (path.length > 64) return { path: [...path], reason: "is nested too deeply" };
  if (typeof value === "string") {
    const reason = textReason(value);
    return reason ? { path: [...path], reason } : null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      const found = walk(value[i], path);
      path.pop();
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    for (const key in value) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
      const keyReason = textReason(key);
      if (keyReason) return { path: [...path, key], reason: `has a field name that ${keyReason}` };
      path.push(key);
      const found = walk((value as Record<string, unknown>)[key], path);
      path.pop();
      if (found) return found;
    }
  }
  return null;
}
