/**
 * Writes schemas/director-control.schema.json from the zod schemas, formatted as prettier formats it
 * (CI runs `prettier --check .`). Run with `npm run schemas -w @tide/contracts`; the unit tests fail
 * when the committed file differs from what this renders.
 */
import { writeFile } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as prettier from "prettier";
import { directorControlJsonSchema } from "../src/director-control";

export const DIRECTOR_CONTROL_SCHEMA_FILE = fileURLToPath(
  new URL("../schemas/director-control.schema.json", import.meta.url),
);

/** The file's text: the JSON Schema, formatted with the repository's prettier config. */
export async function renderDirectorControlSchema(): Promise<string> {
  const config = (await prettier.resolveConfig(DIRECTOR_CONTROL_SCHEMA_FILE)) ?? {};
  return prettier.format(JSON.stringify(directorControlJsonSchema(), null, 2), {
    ...config,
    filepath: DIRECTOR_CONTROL_SCHEMA_FILE,
  });
}

const runAsScript = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (runAsScript) {
  await writeFile(DIRECTOR_CONTROL_SCHEMA_FILE, await renderDirectorControlSchema());
  console.log(`wrote ${DIRECTOR_CONTROL_SCHEMA_FILE}`);
}
