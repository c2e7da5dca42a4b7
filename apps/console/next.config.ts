import type { NextConfig } from "next";

/**
 * Headers every response carries. The Content-Security-Policy itself is set per request in
 * src/proxy.ts, because it carries a fresh script nonce.
 */
const securityHeaders = [
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Referrer-Policy", value: "no-referrer" },
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
  { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=(), payment=()" },
];

const config: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
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
