import { describe, expect, it } from "vitest";
import { z } from "zod";
import { jsonBoolean, queryBoolean } from "./boolean";

const issue = (schema: z.ZodType, value: unknown) => schema.safeParse(value).error?.issues[0]?.message;

describe("API booleans", () => {
  it("a JSON boolean is true or false and nothing else", () => {
    expect(jsonBoolean().parse(true)).toBe(true);
    expect(jsonBoolean().parse(false)).toBe(false);
    expect(issue(jsonBoolean(), "false")).toBe('must be true or false, not the string "false"');
    expect(issue(jsonBoolean(), "true")).toBe('must be true or false, not the string "true"');
    expect(issue(jsonBoolean(), 0)).toBe("must be true or false, not the number 0");
    expect(issue(jsonBoolean(), null)).toBe("must be true or false, not null");
    expect(issue(jsonBoolean(), [])).toBe("must be true or false, not a list");
    expect(issue(z.object({ b: jsonBoolean() }), {})).toBe("is missing");
    expect(jsonBoolean().nullable().parse(null)).toBeNull();
  });

  it('a query boolean is exactly "true" or "false"', () => {
    expect(queryBoolean().parse("true")).toBe(true);
    expect(queryBoolean().parse("false")).toBe(false);
    expect(queryBoolean().parse(false)).toBe(false);
    for (const text of ["", "1", "0", "yes", "False", "TRUE", " true"]) {
      expect(issue(queryBoolean(), text), text).toBe(
        `must be true or false, not the string ${JSON.stringify(text)}`,
      );
    }
  });

  it("survives what the REST adapter does to z.boolean(): setting coerce on it", () => {
    // trpc-to-openapi's coerceSchema sets _zod.def.coerce on boolean, number, bigint and date kinds.
    const plain = z.boolean();
    (plain._zod.def as { coerce?: boolean }).coerce = true;
    expect(plain.parse("false")).toBe(true); // the defect
    expect(jsonBoolean()._zod.def.type).toBe("literal");
  });
});
