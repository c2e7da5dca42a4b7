-- Raw observation samples as json text instead of jsonb (issue 16, storage): nothing queries inside
-- a payload, and pglz compresses the text better: a ~4.7 kB sample is ~1.9 kB stored and stays in
-- the heap row, where jsonb took ~2.4 kB in TOAST (the raw tier was ~4.1 kB a sample on disk). The
-- table holds the last few minutes only (older minutes are compacted), so the rewrite is short.
ALTER TABLE "observation_samples" ALTER COLUMN "payload" SET DATA TYPE JSON USING "payload"::json;
