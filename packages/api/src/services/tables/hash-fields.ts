import { HashField, TideError, type HashField as HashFieldT } from "@tide/contracts";
import { normalizeHashFields } from "@tide/forwarding";

/**
 * Parse hash fields from a list or "src_addr,src_port" text into hashing order. Unknown or
 * repeated fields are a bad_request naming `field`.
 */
export function parseHashFields(input: string | readonly string[], field = "hashFields"): HashFieldT[] {
  const parts = typeof input === "string" ? input.split(",").map((s) => s.trim()) : [...input];
  for (const p of parts) {
    if (!HashField.safeParse(p).success) {
      const message = `Unknown hash field "${p}"; use ${HashField.options.join(", ")}.`;
      throw new TideError("bad_request", message, { fields: { [field]: message } });
    }
  }
  try {
    return normalizeHashFields(parts);
  } catch (e) {
    const message = `Hash fields: ${e instanceof Error ? e.message : String(e)}.`;
    throw new TideError("bad_request", message, { fields: { [field]: message } });
  }
}
