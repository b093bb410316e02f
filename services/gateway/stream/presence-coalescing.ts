// Presence coalescing (DESIGN.md "Stream", slow consumers): the frames waiting for one client, where
// a newer presence snapshot of a sender replaces the older one still waiting. A presence frame is a
// whole snapshot, so the older one says nothing the newer does not; every other frame is kept.
// The newer snapshot takes its own place at the end, so ids keep rising on the wire.
//
// Pure (no I/O): the stream decides when to take the bytes and where to write them.

/** What the queue needs of a frame. */
export interface QueuedFrame {
  readonly isPresence: boolean;
  readonly sender: string;
  readonly bytes: Uint8Array;
}

export class CoalescingQueue<F extends QueuedFrame> {
  /** Waiting frames in arrival order; null where a newer snapshot replaced one. */
  private frames: Array<F | null> = [];
  private holes = 0;
  private waitingBytes = 0;
  /** Per sender, where its newest waiting snapshot is (made on the first snapshot: most streams never coalesce). */
  private newestPresence: Map<string, number> | null = null;

  /** Frames waiting (replaced snapshots not counted). */
  get length(): number {
    return this.frames.length - this.holes;
  }

  /** Bytes waiting (replaced snapshots not counted): what the slow-consumer bound is measured on. */
  get bytes(): number {
    return this.waitingBytes;
  }

  /** Appends a frame. Returns true when it replaced an older snapshot of its sender (one frame dropped). */
  push(frame: F): boolean {
    let replaced = false;
    if (frame.isPresence) {
      this.newestPresence ??= new Map();
      const at = this.newestPresence.get(frame.sender);
      const old = at === undefined ? null : this.frames[at];
      if (at !== undefined && old !== null && old !== undefined) {
        this.frames[at] = null;
        this.holes++;
        this.waitingBytes -= old.bytes.length;
        replaced = true;
      }
      this.newestPresence.set(frame.sender, this.frames.length);
    }
    this.frames.push(frame);
    this.waitingBytes += frame.bytes.length;
    return replaced;
  }

  /**
   * Empties the queue and returns what waited as one buffer, in order. A lone frame's own bytes are
   * returned as they are (the usual case in the fan-out: one frame per stream per turn).
   */
  take(): Uint8Array {
    const frames = this.frames;
    let out: Uint8Array;
    if (frames.length === 1) {
      out = frames[0]!.bytes;
    } else {
      out = Buffer.allocUnsafe(this.waitingBytes);
      let offset = 0;
      for (const f of frames) {
        if (f === null) continue;
        out.set(f.bytes, offset);
        offset += f.bytes.length;
      }
    }
    this.clear();
    return out;
  }

  /** Forgets everything waiting (after a take, or when the stream ends). */
  clear(): void {
    // A fresh array, not `length = 0`: measured cheaper for the usual one-frame turn.
    this.frames = [];
    this.holes = 0;
    this.waitingBytes = 0;
    this.newestPresence?.clear();
  }
}
