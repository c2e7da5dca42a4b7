-- Keep compressed raw samples in the heap row (issue 16, storage). A sample is ~4.7 kB of json text
-- and ~1.9-2.1 kB after pglz, and with the default target (~2 kB) about half of them still went out to
-- TOAST (a chunk row, a TOAST index entry, page slack: ~3.3 kB a sample on disk in the storage
-- bench). With a 4 kB target the toaster compresses inline and stops there.
ALTER TABLE "observation_samples" SET (toast_tuple_target = 4096);
