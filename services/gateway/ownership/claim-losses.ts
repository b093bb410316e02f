// A lost claim (another connection holds its key now) ends its stream, and ending a stream comes
// back into the ownership rules (`release`, which forgets the claim). So a loss is not acted on
// where it is found (in a notice, a read's answer, the answer to a write, or anything a release or a
// forget sets off): it is queued, and once the step that found it is over (a microtask later) each
// lost claim's stream is evicted, once, in the order found. What an eviction finds lost in turn
// queues behind and is handled after it, never inside it.

export class ClaimLosses<C> {
  private readonly queue: C[] = [];
  private queued = false;

  /** `evict` ends the claim's stream (or does nothing, when it has ended meanwhile). */
  constructor(private readonly evict: (claim: C) => void) {}

  add(claim: C): void {
    this.queue.push(claim);
    if (this.queued) return;
    this.queued = true;
    queueMicrotask(() => this.flush());
  }

  private flush(): void {
    for (let c = this.queue.shift(); c !== undefined; c = this.queue.shift()) this.evict(c);
    this.queued = false;
  }
}
