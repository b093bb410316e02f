// How long the event loop was away. A timer ticks every TICK_MS; a gap since the last tick longer
// than that means the process was paused (SIGSTOP, a frozen VM) or starved. A gateway that was away
// heard no claim notice meanwhile, and the ones queued for it arrive among the frames they should
// have stopped (the fault campaign: a gateway paused 14 s delivered 430 frames on a stream taken over
// while it slept, before its eviction got through), so it checks its claims before delivering more.

const TICK_MS = 250;

export class StallWatch {
  private readonly thresholdMs: number;
  private last = performance.now();
  /** A stall the tick itself noticed (it ran before anyone asked), not yet reported. */
  private noticed = false;
  private timer: NodeJS.Timeout | undefined;

  /** A gap of more than `thresholdMs` beyond the tick counts as a stall. */
  constructor(thresholdMs: number) {
    this.thresholdMs = thresholdMs;
  }

  start(): void {
    this.timer = setInterval(() => {
      const now = performance.now();
      if (now - this.last > TICK_MS + this.thresholdMs) this.noticed = true;
      this.last = now;
    }, TICK_MS).unref();
  }

  /** Whether the loop was away too long since it was last asked; each stall is reported once. */
  stalled(): boolean {
    const now = performance.now();
    if (!this.noticed && now - this.last <= TICK_MS + this.thresholdMs) return false;
    this.noticed = false;
    this.last = now;
    return true;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
