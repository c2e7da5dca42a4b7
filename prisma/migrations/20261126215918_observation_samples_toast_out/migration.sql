-- Raw samples out of line after all, compressed (issue 16, storage). Kept inline (toast_tuple_target
-- 4096), a ~1.95 kB compressed sample makes a ~2.05 kB row and only three fit in an 8 kB page: the
-- storage bench measured ~3.2 kB a sample in the heap. With a 256-byte target every payload but a
-- tiny one goes to TOAST compressed, where chunks of any length pack tightly, and the heap row is
-- ~130 bytes.
ALTER TABLE "observation_samples" SET (toast_tuple_target = 256);
