/**
 * What `tide-console setup-postgres` writes, decided without touching anything (setup-postgres.ts
 * does the writing). The console reaches PostgreSQL over its Unix socket with peer authentication:
 * Debian's pg_hba.conf lets a local socket connect as the role named like the connecting OS user
 * (`local all all peer`), so the role is named after the service's user (tide-console), there is
 * no password to generate, store or rotate, and no pg_hba.conf edit is needed.
 */

export const DEFAULT_ENV_FILE = "/etc/tide/console.env";
export const DEFAULT_SOCKET_DIR = "/var/run/postgresql";
export const DEFAULT_PG_PORT = 5432;
export const DATABASE_NAME = "tide";

export interface PostgresTarget {
  role: string;
  database: string;
  socketDir: string;
  port: number;
}

/** DATABASE_URL over the socket in `socketDir`, no password (peer authentication). */
export function socketDatabaseUrl(t: PostgresTarget): string {
  const port = t.port === DEFAULT_PG_PORT ? "" : `&port=${t.port}`;
  return `postgresql://${encodeURIComponent(t.role)}@localhost/${encodeURIComponent(t.database)}?host=${t.socketDir}${port}`;
}

/**
 * psql script (variables :role and :db) creating the role and the database when missing; it prints
 * one line for each: "role tide-console created" (or exists), "database tide created" (or exists).
 */
export const CREATE_ROLE_AND_DATABASE = String.raw`
SELECT 'role ' || :'role' || ' ' || CASE WHEN EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'role') THEN 'exists' ELSE 'created' END;
SELECT format('CREATE ROLE %I LOGIN', :'role') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'role') \gexec
SELECT 'database ' || :'db' || ' ' || CASE WHEN EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db') THEN 'exists' ELSE 'created' END;
SELECT format('CREATE DATABASE %I OWNER %I ENCODING %L', :'db', :'role', 'UTF8') WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db') \gexec
`;

/** A new /etc/tide/console.env: the settings an operator looks for, the optional ones commented. */
export function newEnvFile(databaseUrl: string): string {
  return `# Tide console configuration (systemd EnvironmentFile of tide-console.service; tide-console
# reads it too). Mode 0640 root:tide-console. After a change: systemctl restart tide-console
# (a renewed certificate needs only: systemctl reload tide-console).

# Written by tide-console setup-postgres: PostgreSQL on this host over its Unix socket, peer authentication.
DATABASE_URL=${databaseUrl}

# Where the console listens. 127.0.0.1: only a reverse proxy on this host reaches it.
#TIDE_CONSOLE_HOST=127.0.0.1
#PORT=3000

# HTTPS served by the console itself (both files readable by tide-console; PEM).
#TIDE_TLS_CERT_FILE=/etc/tide/tls/console.crt
#TIDE_TLS_KEY_FILE=/etc/tide/tls/console.key
`;
}

export type EnvFileChange =
  | { kind: "create"; content: string }
  | { kind: "append"; content: string }
  | { kind: "unchanged" }
  | { kind: "conflict"; current: string };

/** What to do to the env file (`existing`: its content, or null when missing) for DATABASE_URL. */
export function planEnvFile(existing: string | null, databaseUrl: string): EnvFileChange {
  if (existing === null) return { kind: "create", content: newEnvFile(databaseUrl) };
  const line = /^\s*(?:export\s+)?DATABASE_URL\s*=\s*(.*)$/m.exec(existing);
  if (!line) {
    const sep = existing === "" || existing.endsWith("\n") ? "" : "\n";
    return {
      kind: "append",
      content: `${existing}${sep}\n# Written by tide-console setup-postgres: PostgreSQL on this host over its Unix socket, peer authentication.\nDATABASE_URL=${databaseUrl}\n`,
    };
  }
  const current = (line[1] ?? "").trim().replace(/^(["'])(.*)\1$/, "$2");
  return current === databaseUrl ? { kind: "unchanged" } : { kind: "conflict", current };
}
