-- AlterTable
ALTER TABLE "hosts" ADD COLUMN     "pmtu_targets" JSONB NOT NULL DEFAULT '[]';
