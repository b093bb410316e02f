// How many requests to the buckets each queued part of a gateway's ownership keeps in flight at
// once. Named together because together they are its ceiling: 32 deletes + 64 renewals = 96 at
// once, plus, after a time the gateway could not hear the mesh, 64 reads of its claims (and the
// writes-back they find needed). An open's own claim write is not queued: it goes as the opens come.

export const IN_FLIGHT = {
  /**
   * Claims of ended streams being deleted (claim-releases.ts, through a paced queue): when a gateway
   * loses every client at once, the opens' writes must not wait behind thousands of deletes.
   */
  claimDeletes: 32,
  /** Claims being renewed (claim-renewals.ts): one after another, 16,000 claims on a replicated bucket took longer than the period. */
  renewals: 64,
  /** Claims' keys read at once when every claim is checked again (claim-checks.ts checkAll). */
  rereads: 64,
} as const;
