-- The agent's drop totals (samples it could not deliver, by reason), from its latest batch.
ALTER TABLE "hosts" ADD COLUMN "samples_dropped" JSONB;
