/**
 * Command line of the dev stack, used by bin/tide-up, bin/tide-down and bin/tide-test:
 *   node --import tsx packages/devstack/src/cli.ts <command>
 *
 *   pg:start        create/start the dev cluster; prints its DATABASE_URL on stdout
 *   pg:stop         stop the dev cluster (data is kept)
 *   pg:url          print the running dev cluster's DATABASE_URL (exit 1 if not running);
 *                   --socket: the same database over its Unix socket (for a client beside it)
 *   db:migrate      apply prisma/migrations to $DATABASE_URL (prints a summary; all output on failure)
 *   db:seed         run the seed against $DATABASE_URL
 *   db:drift-check  in a throwaway cluster: do prisma/migrations match prisma/schema.prisma?
 *                   (exit 2 on drift); optional args: <schema.prisma> <migrations dir>
 *   lab:token       ensure the lab's admin API token (<data dir>/lab-token, mode 600) for the console
 *                   at the given URL (default http://localhost:3000); prints the file's path
 * Progress goes to stderr so that stdout stays machine-readable.
 */
import path from "node:path";
import { ensureLabToken } from "./lab-token";
import { migrate, migrationsMatchSchema, seed, seedWorkspace } from "./migrations";
import { clusterUrl, ensureCluster, stopCluster } from "./postgres/dev-cluster";
import { startTempCluster } from "./postgres/temp-cluster";
import { REPO_ROOT } from "./repo-root";

const log = (line: string) => process.stderr.write(`    ${line}\n`);

function requireDatabaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error("DATABASE_URL is not set");
  return url;
}

async function main(command: string | undefined, args: string[]): Promise<number> {
  switch (command) {
    case "pg:start": {
      const cluster = await ensureCluster({ log });
      process.stdout.write(`${cluster.url}\n`);
      return 0;
    }
    case "pg:stop":
      log((await stopCluster({ log })) ? "PostgreSQL stopped" : "PostgreSQL was not running");
      return 0;
    case "pg:url": {
      const url = clusterUrl({ socket: args.includes("--socket") });
      if (!url) {
        log("the dev cluster is not running (npm run up)");
        return 1;
      }
      process.stdout.write(`${url}\n`);
      return 0;
    }
    case "db:migrate": {
      const output = await migrate(requireDatabaseUrl(), { quiet: true });
      for (const line of output.split("\n")) {
        if (/migrations? (found|have been applied)|└─|No pending|successfully applied/.test(line))
          log(line.trim());
      }
      return 0;
    }
    case "db:seed":
      log(`seed script of ${seedWorkspace()}`);
      await seed(requireDatabaseUrl());
      return 0;
    case "db:drift-check": {
      const cluster = await startTempCluster({ log });
      try {
        const ok = await migrationsMatchSchema(cluster.url, { schema: args[0], migrations: args[1] });
        log(
          ok
            ? "prisma/migrations match prisma/schema.prisma"
            : "DRIFT: prisma/schema.prisma differs from prisma/migrations (SQL above); " +
                "create a migration: bash packages/db/scripts/new-migration.sh <name>",
        );
        return ok ? 0 : 2;
      } finally {
        await cluster.stop();
      }
    }
    case "lab:token": {
      const file = await ensureLabToken({
        consoleUrl: args[0] ?? "http://localhost:3000",
        dataDir: path.resolve(process.env.TIDE_DATA_DIR ?? path.join(REPO_ROOT, ".tide")),
        log,
      });
      process.stdout.write(`${file}\n`);
      return 0;
    }
    default:
      process.stderr.write(
        "usage: cli.ts pg:start | pg:stop | pg:url [--socket] | db:migrate | db:seed | db:drift-check [schema migrations] | " +
          "lab:token [console URL]\n",
      );
      return 64;
  }
}

main(process.argv[2], process.argv.slice(3)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
