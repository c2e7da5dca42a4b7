function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Before/after of an audit event as two short JSON strings. When both are objects, only the keys
 * whose values differ are kept ({state:"active"} → {state:"draining"}), so the change is the text.
 */
export function compactChange(before: unknown, after: unknown): { before: string; after: string } {
  if (isRecord(before) && isRecord(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
      (k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]),
    );
    const pick = (o: Record<string, unknown>) =>
      Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));
    return { before: JSON.stringify(pick(before)), after: JSON.stringify(pick(after)) };
  }
  return {
    before: before === null || before === undefined ? "—" : JSON.stringify(before),
    after: after === null || after === undefined ? "—" : JSON.stringify(after),
  };
}
