// Reading a claim's key when something says it may have changed (a sweep's notice, a refused
// renewal, a re-read after a silence), one read at a time per claim: a check asked for while its
// claim is being read asks for one more read after it, never a second read beside it (their answers
// could land out of order). What asks for a check has heard of a change the bucket had stored (a
// notice is sent once the write or delete is acknowledged), so a read from the stream leader finds
// it: no read again later in case it was still committing.

import { IN_FLIGHT } from './in-flight.js';

export class ClaimChecks<C extends object> {
  /** Claims being read: whether another read was asked for meanwhile, and when the reads end. */
  private readonly running = new Map<C, { again: boolean; done: Promise<void> }>();

  /** `reconcile` reads the key and acts on it. */
  constructor(private readonly reconcile: (claim: C) => Promise<void>) {}

  /**
   * Reads now, or once more after the read in flight; resolves when the last read asked for has
   * acted (a caller that must know the key was read after its call, verify(), waits for that one).
   */
  check(claim: C): Promise<void> {
    const inFlight = this.running.get(claim);
    if (inFlight !== undefined) {
      inFlight.again = true;
      return inFlight.done;
    }
    let ended = (): void => {};
    const state = { again: false, done: new Promise<void>((resolve) => (ended = resolve)) };
    this.running.set(claim, state);
    void (async () => {
      try {
        do {
          state.again = false;
          await this.reconcile(claim).catch(() => undefined);
        } while (state.again);
      } finally {
        this.running.delete(claim);
        ended();
      }
    })();
    return state.done;
  }

  /** Reads every claim's key, IN_FLIGHT.rereads at a time; resolves once each has been read. */
  async checkAll(claims: readonly C[]): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < claims.length) await this.check(claims[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT.rereads, claims.length) }, worker));
  }
}
