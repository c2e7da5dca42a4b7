import { LOG2_HISTOGRAM_BUCKETS } from "@tide/contracts";

/**
 * log2 µs histograms as the probes report them: bucket 0 holds [0, 2) µs, bucket i >= 1 holds
 * [2^i, 2^(i+1)) µs.
 */

/** Lower and upper bound of a bucket, in µs. */
export function bucketBounds(i: number): [number, number] {
  return i === 0 ? [0, 2] : [2 ** i, 2 ** (i + 1)];
}

/** The bucket holding a value in µs (the inverse of bucketBounds); the last bucket takes the rest. */
export function log2Bucket(us: number): number {
  if (!(us >= 2)) return 0;
  return Math.min(LOG2_HISTOGRAM_BUCKETS - 1, Math.floor(Math.log2(us)));
}

/** Number of samples in a histogram. */
export function histogramCount(buckets: readonly number[]): number {
  return buckets.reduce((s, v) => s + v, 0);
}

/**
 * Quantile q (0..1) in µs, interpolated linearly inside the bucket that holds it (as Prometheus'
 * histogram_quantile does), or null for an empty histogram.
 */
export function histogramQuantile(buckets: readonly number[], q: number): number | null {
  const total = histogramCount(buckets);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    const n = buckets[i] ?? 0;
    if (n > 0 && seen + n >= rank) {
      const [lo, hi] = bucketBounds(i);
      return lo + ((hi - lo) * (rank - seen)) / n;
    }
    seen += n;
  }
  return bucketBounds(buckets.length - 1)[1];
}
