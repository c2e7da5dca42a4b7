/**
 * Largest batch body the agent sends, bytes. A quarter of the console's cap on agent batches (16 MiB,
 * TIDE_MAX_AGENT_BODY_BYTES): a host with 100 namespaces once sent 155 MB replays that timed out every
 * time while the console processed each anyway. At about 30 KB per sample for such a host this is
 * still ~140 samples, more than a batch holds by count (OBSERVATION_BATCH_MAX).
 */
export const BATCH_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The longest prefix of `items` whose sizes add up to at most `maxBytes`; never empty when `items`
 * is not (one sample larger than the bound goes alone: the console says whether it takes it).
 */
export function boundedBatch<T>(items: readonly T[], maxBytes: number, sizeOf: (item: T) => number): T[] {
  const out: T[] = [];
  let total = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (out.length > 0 && total + size > maxBytes) break;
    out.push(item);
    total += size;
  }
  return out;
}

/** Bytes of an item as JSON in a request body. */
export const jsonBytes = (item: unknown): number => Buffer.byteLength(JSON.stringify(item));
