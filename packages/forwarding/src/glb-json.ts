import { type TableSpec } from "./types";
export class GlbConfigError extends Error {}
export function parseGlbConfigJson(_text: string): TableSpec[] { throw new Error("not implemented"); }
