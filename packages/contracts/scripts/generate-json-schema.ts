/**
 * Writes schemas/director-control.schema.json and schemas/redirect-control.schema.json from the zod
 * schemas, formatted as prettier formats them (CI runs `prettier --check .`). Run with
 * `npm run schemas -w @tide/contracts`; the unit tests fail when a committed file differs from what
 * this renders.
 */
import { writeFile } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as prettier from "prettier";
import { directorControlJsonSchema } from "../src/director-control";
import { redirectControlJsonSchema } from "../src/redirect-control";

export const DIRECTOR_CONTROL_SCHEMA_FILE = fileURLToPath(
  new URL("../schemas/director-control.schema.json", import.meta.url),
);

export const REDIRECT_CONTROL_SCHEMA_FILE = fileURLToPath(
  new URL("../schemas/redirect-control.schema.json", import.meta.url),
);

/** A JSON Schema as file text, formatted with the repository's prettier config. */
async function renderSchema(file: string, schema: unknown): Promise<string> {
  const config = (await prettier.resolveConfig(file)) ?? {};
  return prettier.format(JSON.stringify(schema, null, 2), { ...config, filepath: file });
}

/** The director protocol's file text. */
export async function renderDirectorControlSchema(): Promise<string> {
  return renderSchema(DIRECTOR_CONTROL_SCHEMA_FILE, directorControlJsonSchema());
}

/** The redirect protocol's file text. */
export async function renderRedirectControlSchema(): Promise<string> {
  return renderSchema(REDIRECT_CONTROL_SCHEMA_FILE, redirectControlJsonSchema());
}

const runAsScript = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (runAsScript) {
  await writeFile(DIRECTOR_CONTROL_SCHEMA_FILE, await renderDirectorControlSchema());
  console.log(`wrote ${DIRECTOR_CONTROL_SCHEMA_FILE}`);
  await writeFile(REDIRECT_CONTROL_SCHEMA_FILE, await renderRedirectControlSchema());
  console.log(`wrote ${REDIRECT_CONTROL_SCHEMA_FILE}`);
}
