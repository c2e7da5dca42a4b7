import { readFileSync } from "node:fs";
import path from "node:path";
import type { NextConfig } from "next";

/**
 * Tide's release version (the root package.json's), compiled in as @tide/api's version.ts expects:
 * the console's version in its enroll replies and its agent version check. A built console (the
 * Debian package's tree) has no checkout around it to read it from.
 */
const { version } = JSON.parse(readFileSync(path.join(__dirname, "../../package.json"), "utf8")) as {
  version: string;
};

/**
 * Headers every response carries (server/security-headers.json: `tide-console serve` adds the same
 * to the API answers it gives without Next, server/api-direct.ts). The Content-Security-Policy itself is set per request in
 * src/proxy.ts, because it carries a fresh script nonce.
 * Referrer-Policy strict-origin-when-cross-origin (the browsers' default), not no-referrer: under
 * no-referrer Chromium posts the console's own forms with `Origin: null`, which the sign-in and
 * sign-out cross-site check (features/auth/same-origin.ts) cannot tell from another site's post.
 * Other sites still see only the console's origin, never a path (pool names, ids), and nothing
 * at all over plain HTTP from an HTTPS page. src/app/layout.tsx's <meta name="referrer"> says the same.
 */
const securityHeaders = JSON.parse(
  readFileSync(path.join(__dirname, "server/security-headers.json"), "utf8"),
) as { key: string; value: string }[];

const config: NextConfig = {
  reactStrictMode: true,
  // A self-contained server tree (.next/standalone: the traced node_modules, no dev tools) for the
  // Debian package (scripts/release-tree.sh); the monorepo root is the tracing root, so workspace
  // packages and the hoisted node_modules are traced. Next transpiles this file to CommonJS on
  // Node 20, where __dirname is this folder.
  output: "standalone",
  outputFileTracingRoot: path.join(__dirname, "../.."),
  // Traced but never loaded by the console (paths from this folder): sharp and its libvips (~19 MB)
  // for next/image, which the console does not use. (Prisma's runtimes for other databases, which
  // these excludes do not reach in Turbopack's route traces, are left out by release-tree.sh.)
  outputFileTracingExcludes: {
    "*": ["../../node_modules/@img/**", "../../node_modules/sharp/**"],
  },
  poweredByHeader: false,
  // Next quotes a string value itself (a JSON.stringify here would make the version "\"0.1.0\"").
  compiler: { define: { __TIDE_VERSION__: version } },
  // Workspace packages ship TypeScript sources.
  transpilePackages: ["@tide/api", "@tide/contracts", "@tide/db", "@tide/forwarding"],
  // Prisma's driver adapter and node-postgres stay as runtime requires on the server; so does
  // swagger-ui-dist, whose files the API docs route reads from where the package really is.
  serverExternalPackages: ["@prisma/client", "@prisma/adapter-pg", "pg", "swagger-ui-dist"],
  async headers() {
    return [{ source: "/:path*", headers: securityHeaders }];
  },
};

export default config;
