import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { appRouter } from "./_app";

/**
 * Issue 27 item 4: every boolean a procedure takes is jsonBoolean() or queryBoolean()
 * (@tide/contracts boolean.ts). The REST adapter (trpc-to-openapi) sets `coerce` in place on each
 * z.boolean() it reaches in an input (through objects, arrays, optional, nullable, default, lazy;
 * not through pipes), and then Boolean("false") is true, for REST and tRPC alike.
 */

type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  innerType?: z.ZodType;
  getter?: () => z.ZodType;
  options?: z.ZodType[];
  in?: z.ZodType;
  out?: z.ZodType;
  left?: z.ZodType;
  right?: z.ZodType;
  values?: unknown[];
};
const defOf = (s: z.ZodType) => s._zod.def as unknown as Def;

/** Paths of `z.boolean()` (a kind the adapter coerces) anywhere in `schema`. */
function plainBooleans(schema: z.ZodType, path: string, seen = new Set<z.ZodType>()): string[] {
  if (seen.has(schema)) return [];
  seen.add(schema);
  const d = defOf(schema);
  if (d.type === "boolean") return [path];
  const inner = [d.element, d.innerType, d.getter?.(), d.in, d.out, d.left, d.right, ...(d.options ?? [])];
  return [
    ...Object.entries(d.shape ?? {}).flatMap(([k, v]) => plainBooleans(v, `${path}.${k}`, seen)),
    ...inner.flatMap((s) => (s ? plainBooleans(s, path, seen) : [])),
  ];
}

/** A JSON boolean (literal true|false) at the top of a GET input: a query string cannot send one. */
function isJsonBooleanField(schema: z.ZodType): boolean {
  const d = defOf(schema);
  if (["optional", "nullable", "default"].includes(d.type) && d.innerType)
    return isJsonBooleanField(d.innerType);
  return d.type === "literal" && (d.values ?? []).every((v) => typeof v === "boolean");
}

const procedures = Object.entries(
  (
    appRouter._def as unknown as {
      procedures: Record<string, { _def: { inputs: z.ZodType[]; meta?: { openapi?: { method: string } } } }>;
    }
  ).procedures,
);

describe("procedure inputs take booleans the REST adapter cannot coerce", () => {
  it("finds the procedures (the walk is not vacuous)", () => {
    expect(procedures.length).toBeGreaterThan(50);
    expect(procedures.map(([name]) => name)).toContain("proxies.setHealthPin");
  });

  it("no input holds a plain z.boolean()", () => {
    const found = procedures.flatMap(([name, p]) => p._def.inputs.flatMap((s) => plainBooleans(s, name)));
    expect(found).toEqual([]);
  });

  it('a GET\'s boolean is a queryBoolean() ("true"/"false" from the query string)', () => {
    const found = procedures
      .filter(([, p]) => p._def.meta?.openapi?.method === "GET")
      .flatMap(([name, p]) =>
        p._def.inputs.flatMap((s) =>
          Object.entries(defOf(s).shape ?? {})
            .filter(([, f]) => isJsonBooleanField(f))
            .map(([k]) => `${name}.${k}`),
        ),
      );
    expect(found).toEqual([]);
  });
});
