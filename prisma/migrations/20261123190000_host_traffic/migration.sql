-- A proxy host's live traffic (tide-redirect rates, established connections per local address:port
-- and their recent history), recomputed from each batch: the pool page's per-proxy figures.
ALTER TABLE "hosts" ADD COLUMN "traffic" JSONB;
