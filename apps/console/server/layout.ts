import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError } from "./env";

/**
 * Where the command finds the console build and the migrations. Two layouts, told apart by which
 * exists, so one bundle serves both:
 *  - the release tree (scripts/release-tree.sh; /usr/lib/tide/console): tide-console.mjs at the
 *    top, the standalone app in apps/console/, prisma/migrations/, node_modules/ beside them;
 *  - the repository (npm run up, tests): apps/console/dist/tide-console.mjs, the app in
 *    apps/console/, the migrations in <repo>/prisma/migrations.
 */
export interface ConsoleLayout {
  /** The Next.js project directory: its .next/ holds the production build. */
  appDir: string;
  migrationsDir: string;
}

const here = path.dirname(fileURLToPath(import.meta.url));

export function consoleLayout(bundleDir = here): ConsoleLayout {
  const candidates: ConsoleLayout[] = [
    {
      appDir: path.join(bundleDir, "apps/console"),
      migrationsDir: path.join(bundleDir, "prisma/migrations"),
    },
    {
      appDir: path.resolve(bundleDir, ".."),
      migrationsDir: path.resolve(bundleDir, "../../../prisma/migrations"),
    },
  ];
  const found = candidates.find((c) => fs.existsSync(path.join(c.appDir, ".next/BUILD_ID")));
  if (!found) {
    throw new ConfigError(
      `no console build next to ${bundleDir} (looked for ${candidates.map((c) => path.join(c.appDir, ".next/BUILD_ID")).join(" and ")}): ` +
        "run npm run build -w @tide/console",
    );
  }
  return found;
}

/** The build's Next.js config, as `next build` wrote it for the standalone server. */
export function buildConfig(appDir: string): unknown {
  const file = path.join(appDir, ".next/required-server-files.json");
  try {
    return (JSON.parse(fs.readFileSync(file, "utf8")) as { config: unknown }).config;
  } catch (e) {
    throw new ConfigError(`cannot read ${file} (is this a standalone build?): ${(e as Error).message}`);
  }
}
