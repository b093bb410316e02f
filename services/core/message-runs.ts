// A list too long for one NATS message, split over several: the runs of its items (each already
// JSON) that fit a byte limit once joined by commas inside a message's own head and tail. Written
// once for every message that carries a list (the owner census, the claims told to other regions).

/**
 * Runs `[start, end)` of `items`, in order, each fitting `maxBytes` once its items are joined by
 * commas and `overhead` bytes of head and tail are added, and holding at most `maxItems`. An item
 * too large for any message gets a run of its own: NATS refuses it, and the sender tells.
 */
export function messageRuns(items: readonly string[], overhead: number, maxBytes: number, maxItems = Infinity): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  let start = 0;
  // The run so far: overhead, its items, and a comma before each but the first.
  let bytes = overhead;
  items.forEach((item, i) => {
    const size = Buffer.byteLength(item);
    if (i > start && (i - start === maxItems || bytes + 1 + size > maxBytes)) {
      runs.push([start, i]);
      start = i;
      bytes = overhead;
    }
    bytes += (i > start ? 1 : 0) + size;
  });
  if (items.length > start) runs.push([start, items.length]);
  return runs;
}

/** The items of each run as `head` + items joined by commas + `tail`. */
export function joinedRuns(items: readonly string[], head: string, tail: string, maxBytes: number): string[] {
  const overhead = Buffer.byteLength(head) + Buffer.byteLength(tail);
  return messageRuns(items, overhead, maxBytes).map(([s, e]) => `${head}${items.slice(s, e).join(',')}${tail}`);
}
