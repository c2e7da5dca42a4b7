-- Observation storage tiers (issue 16): observation_samples stays the hot raw tier ingest writes;
-- a compactor moves each complete host-minute older than a few minutes into observation_chunks
-- (delta encoded, brotli compressed: ~3,000 bytes of jsonb per sample become tens of bytes) and
-- writes a one-minute rollup into observation_rollups, kept for 30 days by default.
-- CreateTable
CREATE TABLE "observation_chunks" (
    "host_id" TEXT NOT NULL,
    "minute" TIMESTAMPTZ(3) NOT NULL,
    "offsets_ms" INTEGER[],
    "last_at" TIMESTAMPTZ(3) NOT NULL,
    "data" BYTEA NOT NULL,

    CONSTRAINT "observation_chunks_pkey" PRIMARY KEY ("host_id","minute")
);

-- CreateTable
CREATE TABLE "observation_rollups" (
    "host_id" TEXT NOT NULL,
    "minute" TIMESTAMPTZ(3) NOT NULL,
    "samples" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,

    CONSTRAINT "observation_rollups_pkey" PRIMARY KEY ("host_id","minute")
);

-- AddForeignKey
ALTER TABLE "observation_chunks" ADD CONSTRAINT "observation_chunks_host_id_fkey" FOREIGN KEY ("host_id") REFERENCES "hosts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "observation_rollups" ADD CONSTRAINT "observation_rollups_host_id_fkey" FOREIGN KEY ("host_id") REFERENCES "hosts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The data columns are already compressed: store them as they are, without a pglz attempt.
ALTER TABLE "observation_chunks" ALTER COLUMN "data" SET STORAGE EXTERNAL;
ALTER TABLE "observation_rollups" ALTER COLUMN "data" SET STORAGE EXTERNAL;
