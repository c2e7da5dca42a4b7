-- AlterTable
ALTER TABLE "hosts" ADD COLUMN     "flows_read_at" TIMESTAMP(3),
ADD COLUMN     "flows_truncated_at" TIMESTAMP(3);

-- CreateTable
CREATE TABLE "change_reports" (
    "table_version_id" TEXT NOT NULL,
    "pool_id" TEXT NOT NULL,
    "opened_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "closed_at" TIMESTAMP(3),
    "ended_why" TEXT NOT NULL DEFAULT '',
    "baseline" JSONB NOT NULL DEFAULT '{}',
    "predicted" JSONB,
    "report" JSONB,

    CONSTRAINT "change_reports_pkey" PRIMARY KEY ("table_version_id")
);

-- CreateTable
CREATE TABLE "redirect_flows" (
    "host_id" TEXT NOT NULL,
    "client_address" TEXT NOT NULL,
    "client_port" INTEGER NOT NULL,
    "address" TEXT NOT NULL,
    "port" INTEGER NOT NULL,
    "proto" TEXT NOT NULL,
    "first_seen_at" TIMESTAMP(3) NOT NULL,
    "second_chance_packets" BIGINT NOT NULL DEFAULT 0,
    "second_chance_at" TIMESTAMP(3),
    "alternate_hash_packets" BIGINT NOT NULL DEFAULT 0,
    "alternate_hash_at" TIMESTAMP(3),
    "last_resort_packets" BIGINT NOT NULL DEFAULT 0,
    "last_resort_at" TIMESTAMP(3),
    "last_seen_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "redirect_flows_pkey" PRIMARY KEY ("host_id","client_address","client_port","address","port","proto")
);

-- CreateIndex
CREATE INDEX "change_reports_closed_at_idx" ON "change_reports"("closed_at");

-- CreateIndex
CREATE INDEX "change_reports_pool_id_idx" ON "change_reports"("pool_id");

-- CreateIndex
CREATE INDEX "redirect_flows_last_seen_at_idx" ON "redirect_flows"("last_seen_at");

-- AddForeignKey
ALTER TABLE "change_reports" ADD CONSTRAINT "change_reports_table_version_id_fkey" FOREIGN KEY ("table_version_id") REFERENCES "table_versions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "redirect_flows" ADD CONSTRAINT "redirect_flows_host_id_fkey" FOREIGN KEY ("host_id") REFERENCES "hosts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
