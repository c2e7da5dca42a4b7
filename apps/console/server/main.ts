/**
 * The `tide-console` command (bundled by scripts/build-cli.mjs into dist/tide-console.mjs, run by
 * bin/tide-console on an install and by the dev stack): serve, migrate, create-admin,
 * setup-postgres. Exit 0 done, 1 failed (worth a retry), 2 bad configuration or usage (the
 * systemd unit does not restart on it: RestartPreventExitStatus=2).
 */
import { parseArgs } from "node:util";
import { createDb } from "@tide/db";
import { upgradeTableFormats } from "@tide/api/seed/table-format";
import { AdminExistsError, createAdmin } from "./create-admin";
import { ConfigError, databaseUrl, EXIT_BAD_CONFIG, loadEnvFile, serverEnv } from "./env";
import { consoleLayout } from "./layout";
import { migrateDatabase } from "./migrate";
import { serve } from "./serve";
import { setupPostgres } from "./setup-postgres";
import { DEFAULT_ENV_FILE, DEFAULT_PG_PORT, DEFAULT_SOCKET_DIR } from "./setup-postgres.plan";

const USAGE = `usage: tide-console <command>

  serve                       serve the console (HTTP, or HTTPS with TIDE_TLS_CERT_FILE and
                              TIDE_TLS_KEY_FILE) on TIDE_CONSOLE_HOST (127.0.0.1):PORT (3000)
  migrate                     bring the database forward to this release; never resets it
  create-admin EMAIL [--name NAME]
                              create an admin; prints its generated password once
  setup-postgres [--config-file ${DEFAULT_ENV_FILE}] [--socket-dir ${DEFAULT_SOCKET_DIR}]
                 [--port ${DEFAULT_PG_PORT}] [--postgres-user postgres]
                              (root) role and database tide on this host's PostgreSQL, peer
                              authentication over its socket, DATABASE_URL in the env file, migrate

Configuration: the environment, and the file TIDE_CONSOLE_ENV_FILE names (/etc/tide/console.env).
Exit status: 0 done, 1 failed, 2 bad configuration or usage.`;

class UsageError extends Error {}

const say = (line: string) => console.error(`tide-console: ${line}`);

async function migrate(): Promise<void> {
  const url = databaseUrl();
  const { migrationsDir } = consoleLayout();
  const result = await migrateDatabase(url, migrationsDir, say);
  for (const w of result.warnings) say(`warning: ${w}`);
  // Data the schema alone does not bring forward: tables written before they carried their hash
  // fields get one new version (what the development seed does on every run).
  const db = createDb(url, { max: 2 });
  try {
    const upgraded = await upgradeTableFormats(db, "tide-console migrate");
    if (upgraded.length) say(`tables now carry their hash fields: ${upgraded.join(", ")}`);
  } finally {
    await db.$disconnect();
  }
  say(result.applied.length ? `applied ${result.applied.length} migration(s)` : "the database is up to date");
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    console.log(USAGE);
    if (command === undefined) process.exitCode = EXIT_BAD_CONFIG;
    return;
  }
  loadEnvFile();
  switch (command) {
    case "serve":
      if (rest.length) throw new UsageError("serve takes no arguments (configuration is the environment)");
      await serve();
      return;
    case "migrate":
      if (rest.length) throw new UsageError("migrate takes no arguments");
      await migrate();
      return;
    case "create-admin": {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { name: { type: "string", default: "Administrator" } },
      });
      if (positionals.length !== 1) throw new UsageError("create-admin takes one EMAIL");
      const url = databaseUrl();
      const admin = await createAdmin(url, { email: positionals[0] ?? "", name: values.name }).catch(
        (e: unknown) => {
          if (e instanceof Error && e.name === "ZodError")
            throw new UsageError(`not an email: ${positionals[0]}`);
          throw e;
        },
      );
      say(`created admin ${admin.email} (${admin.id}); its password, shown only now:`);
      console.log(admin.password);
      return;
    }
    case "setup-postgres": {
      const { values } = parseArgs({
        args: rest,
        options: {
          // Not --env-file: Node 20 takes that flag for itself wherever it appears on the line.
          "config-file": { type: "string", default: DEFAULT_ENV_FILE },
          "socket-dir": { type: "string", default: DEFAULT_SOCKET_DIR },
          port: { type: "string", default: String(DEFAULT_PG_PORT) },
          "postgres-user": { type: "string", default: "postgres" },
        },
      });
      const port = Number(values.port);
      if (!Number.isInteger(port) || port < 1 || port > 65535)
        throw new UsageError(`not a port: ${values.port}`);
      const script = process.argv[1];
      if (!script) throw new Error("cannot tell which script runs");
      await setupPostgres({
        envFile: values["config-file"],
        socketDir: values["socket-dir"],
        port,
        postgresUser: values["postgres-user"],
        serviceUser: serverEnv().TIDE_CONSOLE_USER,
        migrateCommand: [process.execPath, script, "migrate"],
        log: say,
      });
      say(
        "done: start the console with systemctl enable --now tide-console, then tide-console create-admin EMAIL",
      );
      return;
    }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

main(process.argv.slice(2)).catch((e: unknown) => {
  if (
    e instanceof UsageError ||
    (e instanceof TypeError && "code" in e && String(e.code).startsWith("ERR_PARSE_ARGS"))
  ) {
    say(e.message);
    console.error(USAGE);
    process.exit(EXIT_BAD_CONFIG);
  }
  if (e instanceof ConfigError) {
    say(e.message);
    process.exit(EXIT_BAD_CONFIG);
  }
  if (e instanceof AdminExistsError) {
    say(e.message);
    process.exit(1);
  }
  say(`failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});
