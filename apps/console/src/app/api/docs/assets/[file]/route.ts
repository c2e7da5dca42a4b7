import { readFile } from "node:fs/promises";
import path from "node:path";
// The package's own answer to "where are my files" (it is external: see next.config.ts).
import getAbsoluteFSPath from "swagger-ui-dist/absolute-path.js";

/**
 * Swagger UI's bundle and stylesheet, served by the console itself (no CDN: the CSP allows only
 * 'self', and the console must work where only it is reachable). Only these two files, by name.
 */
const ASSETS: Record<string, string> = {
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui.css": "text/css; charset=utf-8",
};

export async function GET(_request: Request, { params }: { params: Promise<{ file: string }> }) {
  const { file } = await params;
  const type = ASSETS[file];
  if (!type) return new Response("Not found.", { status: 404, headers: { "content-type": "text/plain" } });
  const body = await readFile(path.join(getAbsoluteFSPath(), file));
  return new Response(body, {
    headers: {
      "content-type": type,
      // The version is pinned in package.json; a day is short enough for an upgrade to show.
      "cache-control": "public, max-age=86400",
    },
  });
}
