-- CreateTable
CREATE TABLE "director_pool_sync" (
    "director_id" TEXT NOT NULL,
    "pool_id" TEXT NOT NULL,
    "served_hash" TEXT,
    "served_changed_at" TIMESTAMP(3) NOT NULL,
    "out_of_sync_since" TIMESTAMP(3),
    "checked_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "director_pool_sync_pkey" PRIMARY KEY ("director_id","pool_id")
);

-- CreateIndex
CREATE INDEX "director_pool_sync_pool_id_idx" ON "director_pool_sync"("pool_id");

-- AddForeignKey
ALTER TABLE "director_pool_sync" ADD CONSTRAINT "director_pool_sync_director_id_fkey" FOREIGN KEY ("director_id") REFERENCES "directors"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "director_pool_sync" ADD CONSTRAINT "director_pool_sync_pool_id_fkey" FOREIGN KEY ("pool_id") REFERENCES "pools"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Desired-state changes, announced on commit: agents long-poll GET /api/v1/agent/desired and the
-- console wakes them on this channel instead of waiting for their next batch
-- (services/desired-state.service.ts). Statement-level triggers on everything a desired state is
-- made of. PostgreSQL folds identical notifications of one transaction into one.
-- Prisma's migration runner splits scripts at every semicolon, even inside dollar quotes, so the
-- function body is an E-string with its semicolons written as \073.
CREATE FUNCTION tide_notify_desired() RETURNS trigger LANGUAGE plpgsql
  AS E'BEGIN PERFORM pg_notify(''tide_desired'', TG_TABLE_NAME)\073 RETURN NULL\073 END';

CREATE TRIGGER table_versions_desired AFTER INSERT ON "table_versions"
  FOR EACH STATEMENT EXECUTE FUNCTION tide_notify_desired();
CREATE TRIGGER director_pools_desired AFTER INSERT OR DELETE ON "_DirectorToPool"
  FOR EACH STATEMENT EXECUTE FUNCTION tide_notify_desired();
CREATE TRIGGER directors_desired AFTER INSERT OR UPDATE OR DELETE ON "directors"
  FOR EACH STATEMENT EXECUTE FUNCTION tide_notify_desired();
CREATE TRIGGER pools_desired AFTER UPDATE OR DELETE ON "pools"
  FOR EACH STATEMENT EXECUTE FUNCTION tide_notify_desired();
CREATE TRIGGER hosts_desired AFTER UPDATE OF "pmtu_targets" ON "hosts"
  FOR EACH STATEMENT EXECUTE FUNCTION tide_notify_desired();
