// Several logs read as one (the operator's views of a mesh with regions, core/operator-logs.ts).
// A bounded read goes oldest stored first across the logs: each log is asked for its next message
// only once the one it gave has been handed on, so where the read stands in each log is exact
// whenever the reader stops (a page's cursor). A read that follows the logs live hands messages on
// as they arrive instead: a quiet log must not hold back the others.

/** What the merge needs of a message: its sequence in its log and when it was stored. */
export interface Stored {
  seq: number;
  info: { timestampNanos: number };
}

export interface MergeSource<M> {
  region: string | null;
  messages: AsyncIterable<M>;
  /** The first sequence this source could deliver (core/log-reader.ts startSeq). */
  startSeq: number;
  /** Ends the source: a read still waiting on it then ends (a log reader deletes its consumer). */
  close(): Promise<void>;
}

export interface FromLog<M> {
  region: string | null;
  message: M;
}

/** Oldest first across sources (ties: the sources' order); `position()` says where each stands. */
export class MergedLog<M extends Stored> implements AsyncIterable<FromLog<M>> {
  private readonly sources: readonly MergeSource<M>[];
  /** Per source: the first sequence not yet handed on. */
  private readonly next: number[];

  constructor(sources: readonly MergeSource<M>[]) {
    this.sources = sources;
    this.next = sources.map((s) => s.startSeq);
  }

  /** Per region, the sequence to start from to read on where this read stands. */
  position(): Map<string | null, number> {
    return new Map(this.sources.map((s, i) => [s.region, this.next[i]!]));
  }

  async *[Symbol.asyncIterator](): AsyncIterator<FromLog<M>> {
    const iterators = this.sources.map((s) => s.messages[Symbol.asyncIterator]());
    // undefined: not asked yet; null: the source is done.
    const heads: Array<M | null | undefined> = iterators.map(() => undefined);
    try {
      for (;;) {
        await Promise.all(
          iterators.map(async (it, i) => {
            if (heads[i] !== undefined) return;
            const r = await it.next();
            heads[i] = r.done === true ? null : r.value;
          }),
        );
        let pick = -1;
        for (let i = 0; i < heads.length; i++) {
          const h = heads[i];
          if (h === null || h === undefined) continue;
          if (pick < 0 || h.info.timestampNanos < heads[pick]!.info.timestampNanos) pick = i;
        }
        if (pick < 0) return;
        const message = heads[pick]!;
        heads[pick] = undefined;
        this.next[pick] = message.seq + 1;
        yield { region: this.sources[pick]!.region, message };
      }
    } finally {
      // Each source's own end first (a source held at a message it gave ends its read there), then
      // its close, for a source never asked (its read never began, so its own end never runs).
      await Promise.all(iterators.map(async (it) => it.return?.().catch(() => undefined)));
      await Promise.all(this.sources.map((s) => s.close().catch(() => undefined)));
    }
  }
}

/**
 * Every source's messages as they arrive, for a read that follows the logs: one pump per source into
 * a queue of at most one waiting message per source (a pump waits for its message to be taken).
 */
export async function* inArrivalOrder<M>(sources: readonly MergeSource<M>[]): AsyncGenerator<FromLog<M>> {
  const ready: Array<{ item: FromLog<M>; taken: () => void }> = [];
  let wake: (() => void) | null = null;
  // A holder, not a variable: assigned by the pumps, read by the loop.
  const failed: { error?: unknown; seen: boolean } = { seen: false };
  let running = sources.length;
  let stopped = false;
  const iterators = sources.map((s) => s.messages[Symbol.asyncIterator]());
  const signal = (): void => {
    wake?.();
    wake = null;
  };
  const pumps = iterators.map(async (it, i) => {
    try {
      for (;;) {
        const r = await it.next();
        if (r.done === true) return;
        if (!stopped) {
          await new Promise<void>((taken) => {
            ready.push({ item: { region: sources[i]!.region, message: r.value }, taken });
            signal();
          });
        }
        // Held at the message it gave: its own end runs only if it is asked to.
        if (stopped) {
          await it.return?.();
          return;
        }
      }
    } catch (error) {
      if (!failed.seen) Object.assign(failed, { error, seen: true });
    } finally {
      running--;
      signal();
    }
  });
  try {
    for (;;) {
      const next = ready.shift();
      if (next !== undefined) {
        next.taken();
        yield next.item;
        continue;
      }
      if (failed.seen) throw failed.error;
      if (running === 0) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    stopped = true;
    for (const r of ready.splice(0)) r.taken();
    // A pump waiting on a quiet source ends once the source is closed.
    await Promise.all(sources.map((s) => s.close().catch(() => undefined)));
    await Promise.all(pumps);
  }
}
