// Holding a gateway's live feed: while a hold is under way no live message is dispatched to any
// stream; they wait, in order, and go on when it ends. The gateway holds its feed while it re-reads
// its claims after it could not hear the mesh (a pause, a stalled event loop, a lost NATS
// connection), so a stream whose claim was taken meanwhile gets no frame before it is evicted.

export class LiveHold {
  private holding = 0;
  private waiting: Array<() => void> = [];
  /** Asked before each live message is dispatched: it may start a hold (the gateway's stall watch). */
  check: () => void = () => undefined;

  /**
   * Whether live messages must wait now (asked first, so the hot path allocates nothing while no
   * hold is under way); if so, the caller hands its dispatch to wait().
   */
  held(): boolean {
    if (this.holding === 0) this.check();
    return this.holding > 0;
  }

  /** Runs `dispatch` once the holds end, after those already waiting. */
  wait(dispatch: () => void): void {
    this.waiting.push(dispatch);
  }

  /** Runs `dispatches` once the holds end, before those already waiting: they arrived before them (a group's backlog released during a hold). */
  waitBefore(dispatches: Array<() => void>): void {
    this.waiting.unshift(...dispatches);
  }

  /** Holds the feed (from this call on, synchronously) until `work` is done. */
  async during(work: () => Promise<void>): Promise<void> {
    this.holding++;
    try {
      await work();
    } finally {
      if (--this.holding === 0) {
        const waiting = this.waiting;
        this.waiting = [];
        for (const dispatch of waiting) dispatch();
      }
    }
  }
}
