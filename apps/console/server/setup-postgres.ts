/**
 * `tide-console setup-postgres`: one command from Debian's `postgresql` package to a migrated
 * database (as root): the role and database through `runuser -u postgres -- psql` if missing,
 * DATABASE_URL into /etc/tide/console.env (0640 root:tide-console), then `tide-console migrate` as
 * the service's user. Safe to run again. No demo fleet: that is the development seed's.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { childEnv, ConfigError } from "./env";
import {
  CREATE_ROLE_AND_DATABASE,
  DATABASE_NAME,
  planEnvFile,
  socketDatabaseUrl,
  type PostgresTarget,
} from "./setup-postgres.plan";

export interface SetupPostgresOptions {
  envFile: string;
  socketDir: string;
  port: number;
  /** The OS user whose peer authentication makes psql a superuser (Debian: postgres). */
  postgresUser: string;
  /** The console's OS user: the role is named after it. */
  serviceUser: string;
  /** The command to run `migrate` with, as the service user. */
  migrateCommand: string[];
  log: (line: string) => void;
}

function idOf(user: string, flag: "-u" | "-g"): number | null {
  const r = spawnSync("id", [flag, user], { encoding: "utf8" });
  return r.status === 0 ? Number(r.stdout.trim()) : null;
}

function run(
  command: string,
  args: string[],
  input: string | null,
  env?: NodeJS.ProcessEnv,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: [input === null ? "ignore" : "pipe", "pipe", "pipe"], env });
    let out = "";
    let err = "";
    child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${command} ${args.join(" ")} exited with ${code}: ${(err || out).trim()}`));
    });
    if (input !== null) child.stdin?.end(input);
  });
}

export async function setupPostgres(o: SetupPostgresOptions): Promise<{ databaseUrl: string }> {
  if (process.getuid?.() !== 0)
    throw new ConfigError("setup-postgres runs as root (it uses runuser and writes /etc/tide)");
  const uid = idOf(o.serviceUser, "-u");
  const gid = idOf(o.serviceUser, "-g");
  if (uid === null || gid === null) {
    throw new ConfigError(
      `there is no user ${o.serviceUser} (the package creates it; by hand: adduser --system --group ${o.serviceUser})`,
    );
  }
  if (idOf(o.postgresUser, "-u") === null) {
    throw new ConfigError(
      `there is no user ${o.postgresUser}: is PostgreSQL installed (apt install postgresql)?`,
    );
  }
  const target: PostgresTarget = {
    role: o.serviceUser,
    database: DATABASE_NAME,
    socketDir: o.socketDir,
    port: o.port,
  };

  const psqlArgs = ["-u", o.postgresUser, "--", "psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"];
  psqlArgs.push("-h", o.socketDir, "-p", String(o.port), "-d", "postgres", "-v", `role=${target.role}`);
  psqlArgs.push("-v", `db=${target.database}`);
  const said = await run("runuser", psqlArgs, CREATE_ROLE_AND_DATABASE).catch((e: unknown) => {
    throw new Error(
      `cannot reach PostgreSQL as ${o.postgresUser} on ${o.socketDir} port ${o.port} (is postgresql running?): ${(e as Error).message}`,
    );
  });
  for (const line of said.split("\n").filter(Boolean)) o.log(line);

  const databaseUrl = socketDatabaseUrl(target);
  const existing = fs.existsSync(o.envFile) ? fs.readFileSync(o.envFile, "utf8") : null;
  const change = planEnvFile(existing, databaseUrl);
  switch (change.kind) {
    case "conflict":
      throw new ConfigError(
        `${o.envFile} already sets DATABASE_URL=${change.current}; remove that line to let setup-postgres write ${databaseUrl}`,
      );
    case "create":
    case "append":
      fs.mkdirSync(path.dirname(o.envFile), { recursive: true, mode: 0o755 });
      fs.writeFileSync(o.envFile, change.content, { mode: 0o640 });
      o.log(`${change.kind === "create" ? "wrote" : "added DATABASE_URL to"} ${o.envFile}`);
      break;
    case "unchanged":
      o.log(`${o.envFile} already has this DATABASE_URL`);
      break;
  }
  // Readable by the service, never by others (TLS key paths and any secrets added later).
  fs.chownSync(o.envFile, 0, gid);
  fs.chmodSync(o.envFile, 0o640);

  const [command, ...args] = o.migrateCommand;
  if (!command) throw new Error("no migrate command");
  o.log(`migrating as ${o.serviceUser}`);
  await run(
    "runuser",
    ["-u", o.serviceUser, "--", command, ...args],
    null,
    childEnv({ DATABASE_URL: databaseUrl }),
  ).then((out) => out.trim() && o.log(out.trim()));
  return { databaseUrl };
}
