/**
 * A deterministic pseudo-random source for the benches' synthetic hosts (xorshift32): the same
 * seed gives the same samples in every run, so figures compare across runs and changes.
 */
export function rng(seed: number): () => number {
  let x = seed * 2654435761 + 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return ((x >>> 0) % 1_000_000) / 1_000_000;
  };
}
