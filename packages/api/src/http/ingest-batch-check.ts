import { AgentObservationsIn } from "@tide/contracts";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020";
import { z } from "zod";

/**
 * A fast yes/no check of an agent's batch against the AgentObservationsIn contract, for the direct
 * ingest path (ingest-route.ts). It never replaces the contract: a batch it does not accept takes
 * the REST adapter, where zod checks it again and words every refusal.
 *
 * Why: at 1,000 agents zod's parse of the batches was the console's largest single cost (about a
 * seventh of its CPU in a profile of the ingest bench), because zod builds a result object for
 * every value it checks. The same contract as JSON Schema (zod's own toJSONSchema, the document
 * /api/openapi.json publishes), compiled by ajv into one function, checks a batch in about half
 * the time and allocates next to nothing (figures: issue 16's note, e2e/bench/ingest.bench.ts).
 *
 * Both must accept exactly the same batches. JSON Schema carries every check zod makes except
 * refinements (`.refine`: samples of one host, in time order, namespaces not repeated, ...), so
 * those are collected from the schema itself (collectRefinements) and run on the value after ajv:
 * a refinement added to the contract later is checked here too, and one this cannot place (inside
 * a union, a pipe, a lazy schema) fails the first batch loudly rather than being skipped. Strings
 * are measured as zod measures them (code points) and patterns compiled with zod's flags (none,
 * `unicodeRegExp: false`). ingest-batch-check.test.ts holds both to the same answers over
 * thousands of mutated batches.
 *
 * An accepted batch is used as it was parsed from JSON, so a record with a key `__proto__` (zod
 * leaves it out, JSON.parse makes it an own property) is not accepted here.
 */
export function acceptsBatch(value: unknown): value is AgentObservationsIn {
  checker ??= compileBatchCheck(AgentObservationsIn);
  return checker(value);
}

let checker: ((value: unknown) => boolean) | undefined;

/** Every array element or record value (a Refinement path step). */
const EACH = Symbol("each");

/** A zod refinement and where it applies: object keys, tuple indexes and EACH from the root. */
export interface Refinement {
  path: (string | number | typeof EACH)[];
  fn: (value: unknown) => unknown;
}

/** The yes/no check of `schema` (object schemas whose JSON Schema says everything but refinements). */
export function compileBatchCheck(schema: z.ZodType): (value: unknown) => boolean {
  const refinements: Refinement[] = [];
  collectRefinements(schema, [], refinements, null);
  const ajv = new Ajv2020({
    strict: false,
    allErrors: false,
    validateFormats: false, // zod's own pattern for each format is in the schema
    unicodeRegExp: false, // zod's patterns have no flags
    // Lengths in code points, ajv's default, as zod measures them (a surrogate pair is one)
  });
  const validate: ValidateFunction = ajv.compile(z.toJSONSchema(schema, { io: "input" }));
  return (value) => validate(value) && refinements.every((r) => holdsAt(value, r.path, 0, r.fn));
}

/**
 * The refinements of `schema` and of every schema inside it. `union` names the union a schema is
 * in: a refinement there applies only to values its branch matched, which a path cannot say.
 */
export function collectRefinements(
  schema: z.ZodType,
  path: Refinement["path"],
  out: Refinement[],
  union: string | null,
): void {
  const def = (schema as unknown as { _zod: { def: ZodDef } })._zod.def;
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (c.check !== "custom") continue;
    if (union) throw new Error(`batch check: a refinement inside ${union} at ${describe(path)}`);
    // zod refines an optional or nullable schema's undefined or null too; holdsAt skips them.
    if (def.type === "optional" || def.type === "nullable")
      throw new Error(`batch check: a refinement of a ${def.type} schema at ${describe(path)}`);
    // Counters are numbers refined to whole ones and published as "integer" (observations.ts):
    // ajv's integer check is that refinement (JSON has no NaN or Infinity), so it is not run again.
    if (c.fn === Number.isInteger && z.toJSONSchema(schema).type === "integer") continue;
    out.push({ path, fn: c.fn! });
  }
  switch (def.type) {
    case "object":
      for (const [key, child] of Object.entries(def.shape!))
        collectRefinements(child, [...path, key], out, union);
      // zod drops or keeps unknown keys of other objects; JSON Schema lets them through
      if (def.catchall?._zod.def.type !== "never")
        throw new Error(`batch check: an object that is not strict at ${describe(path)}`);
      return;
    case "array":
      return collectRefinements(def.element!, [...path, EACH], out, union);
    case "record":
      out.push({ path, fn: noProtoKey });
      collectRefinements(def.keyType!, [...path, "(key)"], out, "a record's key");
      return collectRefinements(def.valueType!, [...path, EACH], out, union);
    case "tuple":
      def.items!.forEach((item, i) => collectRefinements(item, [...path, i], out, union));
      if (def.rest) collectRefinements(def.rest, [...path, EACH], out, "a tuple's rest");
      return;
    case "optional":
    case "nullable":
    case "readonly":
      return collectRefinements(def.innerType!, path, out, union);
    case "union":
      for (const option of def.options!) collectRefinements(option, path, out, `a union`);
      return;
    case "string":
    case "number":
    case "int":
    case "boolean":
    case "literal":
    case "enum":
    case "null":
      return;
    default:
      // default/prefault/catch/pipe/transform/lazy/intersection...: the value zod returns is not
      // the value it was given, or JSON Schema cannot say it; the fast path would not be exact.
      throw new Error(`batch check: a ${def.type} schema at ${describe(path)}`);
  }
}

interface ZodDef {
  type: string;
  checks?: { _zod: { def: { check: string; fn?: (value: unknown) => unknown } } }[];
  shape?: Record<string, z.ZodType>;
  catchall?: { _zod: { def: { type: string } } };
  element?: z.ZodType;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  items?: z.ZodType[];
  rest?: z.ZodType | null;
  innerType?: z.ZodType;
  options?: z.ZodType[];
}

/**
 * Whether `fn` holds for every value at `path`. A value that is absent or null has none: ajv let it
 * through only where the schema is optional or nullable, and zod does not refine inside those.
 */
function holdsAt(value: unknown, path: Refinement["path"], i: number, fn: Refinement["fn"]): boolean {
  if (value === undefined || value === null) return true;
  if (i === path.length) return Boolean(fn(value));
  if (typeof value !== "object") return true;
  const step = path[i]!;
  if (step !== EACH) return holdsAt((value as Record<string | number, unknown>)[step], path, i + 1, fn);
  for (const v of Array.isArray(value) ? value : Object.values(value))
    if (!holdsAt(v, path, i + 1, fn)) return false;
  return true;
}

/** zod leaves a record's `__proto__` key out of what it returns; here the value is used as given. */
function noProtoKey(value: unknown): boolean {
  return !Object.prototype.hasOwnProperty.call(value, "__proto__");
}

function describe(path: Refinement["path"]): string {
  return path.map((s) => (s === EACH ? "[*]" : String(s))).join(".") || "(root)";
}
