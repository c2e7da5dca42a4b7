-- CreateTable
CREATE TABLE "fleet_revision" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "revision" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "fleet_revision_pkey" PRIMARY KEY ("id")
);

-- The one row, and the triggers that raise it. Constraint triggers deferred to the commit: the
-- row is locked for the moment of the commit only (not while a pool's table is rebuilt), so
-- writers to different pools do not queue on it, and the raise commits with the change it counts.
-- A reader that reads the revision and then the list keeps the list under that revision (the
-- list can only be newer, never older): the next read sees a higher revision and reads again.
-- Prisma's migration runner splits scripts at every semicolon, even inside dollar quotes, so the
-- function body is an E-string with its semicolons written as \073 (as in director_pool_sync).
ALTER TABLE "fleet_revision" ADD CONSTRAINT "fleet_revision_one_row" CHECK ("id" = 1);
INSERT INTO "fleet_revision" ("id", "revision") VALUES (1, 0);

CREATE FUNCTION tide_fleet_changed() RETURNS trigger LANGUAGE plpgsql
  AS E'BEGIN UPDATE fleet_revision SET revision = revision + 1 WHERE id = 1\073 RETURN NULL\073 END';

CREATE CONSTRAINT TRIGGER pools_fleet AFTER INSERT OR UPDATE OR DELETE ON "pools"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tide_fleet_changed();
CREATE CONSTRAINT TRIGGER binds_fleet AFTER INSERT OR UPDATE OR DELETE ON "binds"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tide_fleet_changed();
CREATE CONSTRAINT TRIGGER proxies_fleet AFTER INSERT OR UPDATE OR DELETE ON "proxies"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tide_fleet_changed();
CREATE CONSTRAINT TRIGGER directors_fleet AFTER INSERT OR UPDATE OR DELETE ON "directors"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tide_fleet_changed();
CREATE CONSTRAINT TRIGGER director_pools_fleet AFTER INSERT OR UPDATE OR DELETE ON "_DirectorToPool"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tide_fleet_changed();
CREATE CONSTRAINT TRIGGER table_versions_fleet AFTER INSERT OR UPDATE OR DELETE ON "table_versions"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tide_fleet_changed();

-- Tests empty these tables with TRUNCATE, which row triggers do not see.
CREATE TRIGGER pools_fleet_truncate AFTER TRUNCATE ON "pools"
  FOR EACH STATEMENT EXECUTE FUNCTION tide_fleet_changed();
CREATE TRIGGER proxies_fleet_truncate AFTER TRUNCATE ON "proxies"
  FOR EACH STATEMENT EXECUTE FUNCTION tide_fleet_changed();
CREATE TRIGGER directors_fleet_truncate AFTER TRUNCATE ON "directors"
  FOR EACH STATEMENT EXECUTE FUNCTION tide_fleet_changed();
CREATE TRIGGER table_versions_fleet_truncate AFTER TRUNCATE ON "table_versions"
  FOR EACH STATEMENT EXECUTE FUNCTION tide_fleet_changed();
