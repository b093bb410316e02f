// Reading a claim's key after a hint, one read at a time per claim: a hint that arrives while its
// claim is being read asks for one more read after it, never a second read beside it (their
// answers could land out of order). A hint can also arrive before the stream leader has stored the
// write it announces (subscribers hear a publish as it is routed, the store commits it through
// RAFT), so a read that still finds the claim unchanged is made once more a moment later.

/** How long after a hint that changed nothing yet the key is read once more (the write was still committing). */
const RECHECK_MS = 500;
/** Keys read at once by checkAll. */
const ALL_IN_FLIGHT = 64;

export class ClaimChecks<C extends object> {
  /** Claims being read, and whether another read was asked for meanwhile. */
  private readonly running = new Map<C, boolean>();

  /** `settle` reads the key and acts; true when it found the claim as this node knew it. */
  constructor(private readonly settle: (claim: C) => Promise<boolean>) {}

  /** Reads now (or after the read in flight); `recheck`: once more a moment later if nothing had changed. */
  async check(claim: C, options: { recheck: boolean }): Promise<void> {
    if (this.running.has(claim)) {
      this.running.set(claim, true);
      return;
    }
    let unchanged = false;
    try {
      do {
        this.running.set(claim, false);
        unchanged = await this.settle(claim).catch(() => false);
      } while (this.running.get(claim) === true);
    } finally {
      this.running.delete(claim);
    }
    if (options.recheck && unchanged) setTimeout(() => void this.check(claim, { recheck: false }), RECHECK_MS).unref();
  }

  /** Reads every claim's key, ALL_IN_FLIGHT at a time; resolves once each has been read. */
  async checkAll(claims: readonly C[]): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < claims.length) await this.check(claims[next++]!, { recheck: false });
    };
    await Promise.all(Array.from({ length: Math.min(ALL_IN_FLIGHT, claims.length) }, worker));
  }
}
