-- Hash-field changes that keep connections (issue 26): while a pool migrates, its tables carry
-- the old fields as alt_hash_fields (GLBD v3), so an established flow reaches its old proxy as an
-- extra hop. Empty = no migration.
-- AlterTable
ALTER TABLE "pools" ADD COLUMN     "alt_hash_fields" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "hash_migration_started_at" TIMESTAMP(3);
