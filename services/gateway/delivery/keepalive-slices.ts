// Keepalives spread over the interval: every channel group belongs to one of SLICES slices (a hash of
// its key, so always the same one) and one slice is sent per tick of KEEPALIVE_INTERVAL / SLICES.
// Each stream still gets its pair every interval; the gateway no longer writes to every stream in
// one burst, which at 100,000 streams on a machine held up live frames behind it (docs/BENCHMARKS.md,
// scale).

export const KEEPALIVE_SLICES = 10;

/** FNV-1a of the group key, reduced to a slice. */
export function keepaliveSlice(key: string, slices = KEEPALIVE_SLICES): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % slices;
}
