// A named import of one field: the bundle (esbuild) carries the version, not the whole package.json.
import { version } from "../../../package.json";

/** tide-agent version: Tide's release version, declared once in the root package.json. */
export const AGENT_VERSION: string = version;
