// Timers passed in rather than taken from the globals (the gateway's ownership waits on them: a read
// again after a hint, a retried delete, the claim index's batch per turn, ...), so that the
// interleaving tests (test/helpers/interleavings/) decide when each one fires against the I/O.
// The system's timers never keep the process alive.

/** Cancels a timer that has not fired yet (nothing once it has). */
export type CancelTimer = () => void;

export interface Timers {
  /** Calls `fire` once, `ms` from now. */
  after(ms: number, fire: () => void): CancelTimer;
  /** Calls `fire` once this turn of the event loop is over: what callers did in one turn goes together. */
  afterTurn(fire: () => void): void;
}

export const systemTimers: Timers = {
  after(ms, fire) {
    const timer = setTimeout(fire, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
  afterTurn(fire) {
    setImmediate(fire);
  },
};
