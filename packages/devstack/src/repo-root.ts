import path from "node:path";
import { fileURLToPath } from "node:url";

/** The checkout's root directory (tests, the lab and the dev stack find files relative to it). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
