// A map whose entries expire, and which holds at most `maxEntries`: beyond it the entry written
// longest ago goes (a Map iterates in insertion order, and a write re-inserts). What a client sends
// can fill it, never grow it.

export class ExpiringCache<V> {
  private readonly entries = new Map<string, { expires: number; value: V }>();
  private readonly maxEntries: number;

  constructor(maxEntries: number) {
    this.maxEntries = maxEntries;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value, or undefined when absent or expired (an expired entry is dropped). */
  get(key: string, now = Date.now()): V | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    if (hit.expires > now) return hit.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, ttlMs: number, now = Date.now()): void {
    this.entries.delete(key);
    this.entries.set(key, { expires: now + ttlMs, value });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
  }
}
