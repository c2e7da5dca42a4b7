-- Authentication changes, announced on channel tide_auth to every console process: a console
-- trusts an API token or host token it resolved from its memory (packages/api auth/auth-cache.ts,
-- auth/host-token-cache.ts) until the database says the token, or the user behind it, changed.
-- Triggers, not the services, so that every writer is heard: another console, tide-console
-- create-admin, a seed, an operator's own SQL. Payloads: "token:<id>", "user:<id>",
-- "host-token:<id>", and "all" after a TRUNCATE. The channel name is spelled in AUTH_CHANNEL
-- (packages/api live/channels.ts) too, migrations are history and never change.

-- Prisma's migration runner splits scripts at every semicolon, even inside dollar quotes, so the
-- function body is an E-string with its semicolons written as \073 (as in director_pool_sync).
CREATE FUNCTION tide_notify_auth() RETURNS trigger LANGUAGE plpgsql AS E'BEGIN IF TG_OP = ''TRUNCATE'' THEN PERFORM pg_notify(''tide_auth'', ''all'')\073 ELSIF TG_OP = ''DELETE'' THEN PERFORM pg_notify(''tide_auth'', TG_ARGV[0] || '':'' || OLD.id)\073 ELSE PERFORM pg_notify(''tide_auth'', TG_ARGV[0] || '':'' || NEW.id)\073 END IF\073 RETURN NULL\073 END';

-- What an API token acts with: its scopes, its expiry, whether it is revoked (not last_used_at,
-- which every use records once a minute).
CREATE TRIGGER api_tokens_auth AFTER UPDATE OF revoked_at, expires_at, scopes, token_hash, created_by_id
  OR DELETE ON api_tokens FOR EACH ROW EXECUTE FUNCTION tide_notify_auth('token');
CREATE TRIGGER api_tokens_auth_truncate AFTER TRUNCATE ON api_tokens
  FOR EACH STATEMENT EXECUTE FUNCTION tide_notify_auth('token');

-- What a user's tokens act as: the user's role (their scopes), whether they are disabled, the
-- name and email the audit log records.
CREATE TRIGGER users_auth AFTER UPDATE OF role, disabled_at, email, name
  OR DELETE ON users FOR EACH ROW EXECUTE FUNCTION tide_notify_auth('user');
CREATE TRIGGER users_auth_truncate AFTER TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION tide_notify_auth('user');

-- A host token revoked (or removed with its host).
CREATE TRIGGER host_tokens_auth AFTER UPDATE OF revoked_at, token_hash, host_id
  OR DELETE ON host_tokens FOR EACH ROW EXECUTE FUNCTION tide_notify_auth('host-token');
CREATE TRIGGER host_tokens_auth_truncate AFTER TRUNCATE ON host_tokens
  FOR EACH STATEMENT EXECUTE FUNCTION tide_notify_auth('host-token');
