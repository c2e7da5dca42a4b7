-- Packed rollup hours (issue 16, storage): a row of observation_rollups covers span_minutes minutes
-- from `minute`, 1 while replays may still change the minute, 60 once the compactor has packed an
-- hour past the 1 s retention (~30 days x 1,000 hosts: 720 k rows instead of 43 M).
ALTER TABLE "observation_rollups" ADD COLUMN "span_minutes" INTEGER NOT NULL DEFAULT 1;
