/**
 * Bounded FIFO of samples kept while the console is unreachable: when full, the oldest sample is
 * dropped (and counted) so the newest bufferMinutes survive.
 */
export class RingBuffer<T> {
  private items: (T | undefined)[];
  private head = 0;
  private count = 0;
  /** Samples dropped because the buffer was full. */
  dropped = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error("capacity must be a positive integer");
    this.items = new Array<T | undefined>(capacity);
  }

  get size(): number {
    return this.count;
  }

  push(item: T): void {
    if (this.count === this.capacity) {
      this.head = (this.head + 1) % this.capacity;
      this.count--;
      this.dropped++;
    }
    this.items[(this.head + this.count) % this.capacity] = item;
    this.count++;
  }

  /** Up to n oldest items, oldest first, without removing them. */
  peek(n: number): T[] {
    const out: T[] = [];
    for (let i = 0; i < Math.min(n, this.count); i++)
      out.push(this.items[(this.head + i) % this.capacity] as T);
    return out;
  }

  /** Remove the n oldest items (after they were delivered). */
  drop(n: number): void {
    const k = Math.min(n, this.count);
    for (let i = 0; i < k; i++) this.items[(this.head + i) % this.capacity] = undefined;
    this.head = (this.head + k) % this.capacity;
    this.count -= k;
  }
}
