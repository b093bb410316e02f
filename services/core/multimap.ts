// Key to values, keeping a lone value without a container: most accounts hold one stream and most
// claim keys name one, and at tens of thousands of streams a Set each is memory for nothing.
export class MultiMap<V extends object> {
  private readonly map = new Map<string, V | Set<V>>();

  add(key: string, value: V): void {
    const current = this.map.get(key);
    if (current === undefined) this.map.set(key, value);
    else if (current instanceof Set) current.add(value);
    else if (current !== value) this.map.set(key, new Set([current, value]));
  }

  delete(key: string, value: V): void {
    const current = this.map.get(key);
    if (current === value) {
      this.map.delete(key);
    } else if (current instanceof Set) {
      current.delete(value);
      if (current.size === 0) this.map.delete(key);
      else if (current.size === 1) this.map.set(key, current.values().next().value!);
    }
  }

  /** A copy, safe to iterate while values are removed. */
  get(key: string): V[] {
    const current = this.map.get(key);
    if (current === undefined) return [];
    return current instanceof Set ? [...current] : [current];
  }

  *values(): Generator<V> {
    for (const v of this.map.values()) {
      if (v instanceof Set) yield* v;
      else yield v;
    }
  }
}
