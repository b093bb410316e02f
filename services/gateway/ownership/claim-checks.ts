// Reading a claim's key after a hint (or a refused renewal), one read at a time per claim: a hint
// that arrives while its claim is being read asks for one more read after it, never a second read
// beside it (their answers could land out of order). A hint can also arrive before the stream
// leader has stored the write it announces (subscribers hear a publish as it is routed, the store
// commits it through RAFT), so a read after a hint that still finds the claim unchanged is made
// once more a moment later. That moment is a guess: a write stored later still than that is found
// by the claim's next renewal, refused at a stale revision.

import { systemTimers, type Timers } from '../../core/timers.js';
import { IN_FLIGHT } from './in-flight.js';

/** How long after a hint that changed nothing yet the key is read once more (the write was still committing). */
const RECHECK_MS = 500;

export class ClaimChecks<C extends object> {
  /** Claims being read: whether another read was asked for meanwhile, and when the reads end. */
  private readonly running = new Map<C, { again: boolean; done: Promise<void> }>();

  /** `reconcile` reads the key and acts on it; true when it found the claim as this node knew it. */
  constructor(
    private readonly reconcile: (claim: C) => Promise<boolean>,
    private readonly timers: Timers = systemTimers,
  ) {}

  /**
   * Reads now, or once more after the read in flight; resolves when the last read asked for has
   * acted (a caller that must know the key was read after its call, verify(), waits for that one).
   * `recheck`: once more a moment later if nothing had changed.
   */
  check(claim: C, options: { recheck: boolean }): Promise<void> {
    const inFlight = this.running.get(claim);
    if (inFlight !== undefined) {
      inFlight.again = true;
      return inFlight.done;
    }
    let ended = (): void => {};
    const state = { again: false, done: new Promise<void>((resolve) => (ended = resolve)) };
    this.running.set(claim, state);
    void (async () => {
      let unchanged = false;
      try {
        do {
          state.again = false;
          unchanged = await this.reconcile(claim).catch(() => false);
        } while (state.again);
      } finally {
        this.running.delete(claim);
        ended();
      }
      if (options.recheck && unchanged) this.timers.after(RECHECK_MS, () => void this.check(claim, { recheck: false }));
    })();
    return state.done;
  }

  /** Reads every claim's key, IN_FLIGHT.rereads at a time; resolves once each has been read. */
  async checkAll(claims: readonly C[]): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < claims.length) await this.check(claims[next++]!, { recheck: false });
    };
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT.rereads, claims.length) }, worker));
  }
}
