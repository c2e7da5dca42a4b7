-- CreateTable
CREATE TABLE "fleet_revision" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "revision" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "fleet_revision_pkey" PRIMARY KEY ("id")
);

-- The one row, and the triggers that raise it: statement-level, in the writing transaction, so the
-- raise commits with the change it counts. A reader that reads the revision and then the list
-- keeps the list under that revision (the list can only be newer, never older): the next read
-- sees a higher revision and reads again. The row stays locked until the writer commits, which
-- orders writers of different pools at their commits: these writes are operators' changes and
-- health verdicts (a few a minute), held for milliseconds, never the agents' samples.
-- (Constraint triggers deferred to the commit would hold it for less, but Prisma's schema
-- engine cannot introspect them and the drift check fails.)
-- Prisma's migration runner splits scripts at every semicolon, even inside dollar quotes, so the
-- function body is an E-string with its semicolons written as \073 (as in director_pool_sync).
INSERT INTO "fleet_revision" ("id", "revision") VALUES (1, 0);

CREATE FUNCTION tide_fleet_changed() RETURNS trigger LANGUAGE plpgsql
  AS E'BEGIN UPDATE fleet_revision SET revision = revision + 1 WHERE id = 1\073 RETURN NULL\073 END';

CREATE TRIGGER pools_fleet AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "pools"
  FOR EACH STATEMENT EXECUTE FUNCTION tide_fleet_changed();
CREATE TRIGGER binds_fleet AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "binds"
  FOR EACH STATEMENT EXECUTE FUNCTION tide_fleet_changed();
CREATE TRIGGER proxies_fleet AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "proxies"
  FOR EACH STATEMENT EXECUTE FUNCTION tide_fleet_changed();
CREATE TRIGGER directors_fleet AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "directors"
  FOR EACH STATEMENT EXECUTE FUNCTION tide_fleet_changed();
CREATE TRIGGER director_pools_fleet AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "_DirectorToPool"
  FOR EACH STATEMENT EXECUTE FUNCTION tide_fleet_changed();
CREATE TRIGGER table_versions_fleet AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "table_versions"
  FOR EACH STATEMENT EXECUTE FUNCTION tide_fleet_changed();
