// An array read from its front: the oldest item is taken by moving a head index, not by shift()
// (which moves every item left), and the consumed front is cut off now and then, once it is both
// past a size and most of the array. The paced queue, the resume windows' eviction order and each
// window's frames are kept this way.

export class ArrayQueue<T> {
  private items: T[] = [];
  private head = 0;

  /** `compactPast`: how many taken items may wait at the front before they are cut off. */
  constructor(private readonly compactPast = 1024) {}

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The item `i` places from the front (0: the oldest). */
  at(i: number): T | undefined {
    return this.items[this.head + i];
  }

  /** The newest item. */
  last(): T | undefined {
    return this.length === 0 ? undefined : this.items[this.items.length - 1];
  }

  /** Puts `item` `i` places from the front. */
  insert(i: number, item: T): void {
    this.items.splice(this.head + i, 0, item);
  }

  /** Takes the oldest item. */
  shift(): T | undefined {
    if (this.head === this.items.length) return undefined;
    const item = this.items[this.head++];
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > this.compactPast && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** A copy of the items from `i` places from the front on. */
  from(i: number): T[] {
    return this.items.slice(this.head + i);
  }

  /** Keeps only the items `keep` accepts. */
  retain(keep: (item: T) => boolean): void {
    this.items = this.items.slice(this.head).filter(keep);
    this.head = 0;
  }
}
