/**
 * Before/after of an audit event as the fields that changed, one line each ("state: active ->
 * draining"), instead of two blobs of JSON. Nested objects are walked ("healthCheck.rise"); lists
 * of plain values read as "a, b"; anything else is shown as short JSON.
 */

export interface ChangedField {
  /** Dotted field path, e.g. "state" or "healthCheck.intervalMs"; "" for a value that is not an object. */
  field: string;
  /** The value before, as text; null when the field did not exist (a creation). */
  before: string | null;
  /** The value after, as text; null when the field is gone (a removal). */
  after: string | null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isScalar(v: unknown): v is string | number | boolean | null {
  return v === null || ["string", "number", "boolean"].includes(typeof v);
}

/** A value as people read it: strings bare, nothing as "none", lists of plain values comma-separated. */
export function valueText(v: unknown): string {
  if (v === null || v === undefined) return "none";
  if (typeof v === "string") return v === "" ? '""' : v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v) && v.every(isScalar)) return v.length === 0 ? "none" : v.map(valueText).join(", ");
  return JSON.stringify(v);
}

function flatten(value: Record<string, unknown>, prefix: string, out: Map<string, unknown>): void {
  for (const [key, v] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (isRecord(v) && Object.keys(v).length > 0) flatten(v, path, out);
    else out.set(path, v);
  }
}

/** The fields whose values differ between before and after, in the order they first appear. */
export function changedFields(before: unknown, after: unknown): ChangedField[] {
  const absent = (v: unknown) => v === null || v === undefined;
  if (absent(before) && absent(after)) return [];
  if ((isRecord(before) || absent(before)) && (isRecord(after) || absent(after))) {
    const b = new Map<string, unknown>();
    const a = new Map<string, unknown>();
    if (isRecord(before)) flatten(before, "", b);
    if (isRecord(after)) flatten(after, "", a);
    const fields = [...new Set([...b.keys(), ...a.keys()])];
    // "service: none" next to "service.kind: tcp" says the same twice: the nested lines suffice.
    const nested = (f: string) => fields.some((g) => g.startsWith(`${f}.`));
    return fields
      .filter((f) => JSON.stringify(b.get(f)) !== JSON.stringify(a.get(f)))
      .filter((f) => !nested(f))
      .map((f) => ({
        field: f,
        before: b.has(f) ? valueText(b.get(f)) : null,
        after: a.has(f) ? valueText(a.get(f)) : null,
      }));
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  return [
    {
      field: "",
      before: absent(before) ? null : valueText(before),
      after: absent(after) ? null : valueText(after),
    },
  ];
}
