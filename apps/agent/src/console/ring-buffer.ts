/**
 * Bounded FIFO of samples kept while the console is unreachable: bounded in samples (bufferMinutes)
 * and, when a byte bound is given, in bytes (bufferMaxMiB: a host with 100 namespaces sends ~30 KB
 * samples, so a count alone does not bound memory). When full, the oldest samples are dropped (and
 * counted) so the newest survive; the newest sample is kept even when it alone exceeds the bound.
 */
export class RingBuffer<T> {
  private items: (T | undefined)[];
  private sizes: number[];
  private head = 0;
  private count = 0;
  private total = 0;
  /** Samples dropped because the buffer was full. */
  dropped = 0;

  constructor(
    readonly capacity: number,
    readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error("capacity must be a positive integer");
    if (!(maxBytes > 0)) throw new Error("maxBytes must be positive");
    this.items = new Array<T | undefined>(capacity);
    this.sizes = new Array<number>(capacity).fill(0);
  }

  get size(): number {
    return this.count;
  }

  /** Bytes held (the sizes given to push). */
  get bytes(): number {
    return this.total;
  }

  /** Append; returns how many of the oldest items were dropped to make room. */
  push(item: T, bytes = 0): number {
    let dropped = 0;
    while (this.count > 0 && (this.count === this.capacity || this.total + bytes > this.maxBytes)) {
      this.drop(1);
      dropped++;
    }
    const at = (this.head + this.count) % this.capacity;
    this.items[at] = item;
    this.sizes[at] = bytes;
    this.total += bytes;
    this.count++;
    this.dropped += dropped;
    return dropped;
  }

  /** Up to n oldest items, oldest first, without removing them. */
  peek(n: number): T[] {
    const out: T[] = [];
    for (let i = 0; i < Math.min(n, this.count); i++)
      out.push(this.items[(this.head + i) % this.capacity] as T);
    return out;
  }

  /** Remove the n oldest items (after they were delivered); returns how many were removed. */
  drop(n: number): number {
    const k = Math.min(n, this.count);
    for (let i = 0; i < k; i++) {
      const at = (this.head + i) % this.capacity;
      this.items[at] = undefined;
      this.total -= this.sizes[at]!;
      this.sizes[at] = 0;
    }
    this.head = (this.head + k) % this.capacity;
    this.count -= k;
    return k;
  }
}
